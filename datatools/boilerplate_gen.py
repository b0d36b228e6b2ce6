"""Generated low-quality web text: the negative class of the default quality model.

Kinds: navigation menus, cookie/consent banners, footers, SEO keyword stuffing, spam ads,
comment spam, tag clouds, pagination/listing pages, and word salad (the words of a real
document in shuffled order: same unigrams, broken bigrams). All seeded: the same seed gives the
same documents. Vocabulary is built in, plus the words of real documents passed in for salad.
"""
from __future__ import annotations

import random

NAV = ["Home", "About", "About us", "Contact", "Blog", "News", "Shop", "Products", "Services", "Login",
       "Sign in", "Sign up", "Register", "My account", "Cart", "Checkout", "FAQ", "Help", "Support", "Careers",
       "Press", "Privacy", "Terms", "Sitemap", "Search", "Menu", "Categories", "Archives", "Events", "Gallery",
       "Downloads", "Pricing", "Features", "Partners", "Team", "Portfolio", "Resources", "Docs", "Community"]
COOKIE = ["We use cookies to improve your experience on our website.",
          "By continuing to browse you agree to our use of cookies.", "Accept all cookies", "Reject all",
          "Manage preferences", "This site uses cookies for analytics and personalised content.",
          "Cookie settings", "Learn more about our cookie policy.", "Please enable JavaScript to view this page.",
          "Your browser is out of date.", "Subscribe to our newsletter", "Enter your email address",
          "Click here to continue", "Loading...", "Skip to main content", "Back to top"]
FOOTER = ["Copyright © {year} {brand}. All rights reserved.", "Powered by {brand}", "Follow us on Facebook",
          "Follow us on Twitter", "Share this page", "Privacy Policy | Terms of Service | Cookie Policy",
          "{brand} Inc., {num} Main Street", "Made with love by {brand}", "Sitemap | Accessibility | Contact"]
SPAM_PRODUCTS = ["cheap watches", "replica bags", "weight loss pills", "online casino", "free spins", "payday loans",
                 "crypto signals", "forex bot", "viagra", "diet tea", "seo services", "backlinks", "essay writing",
                 "followers", "likes", "bitcoin doubler", "miracle cream", "lottery tips"]
SPAM_TEMPLATES = ["Buy {p} online at the best price!!!", "BEST {P} - 100% GUARANTEED - ORDER NOW",
                  "Click here for {p} {p} {p}", "Top 10 {p} sites {year}", "{p} free download no survey",
                  "Get {p} now, limited offer, only today, act fast", "Cheapest {p} {p} discount code coupon",
                  "Wow!!! Earn ${num} per day from home with {p}", "{p} near me open now best rated",
                  "Hot deal: {p} 90% off + free shipping", "Visit our site for {p}, {p} and more {p}"]
COMMENTS = ["Great post!", "Thanks for sharing.", "Nice article, very informative.", "I agree with you.",
            "First!", "lol", "Check out my website", "Very helpful thank you so much", "Awesome!!!",
            "Where can I find more info?", "This is spam", "Subscribe to my channel", "+1", "Same here"]
LISTING = ["Page {n} of {m}", "Next »", "« Previous", "Showing {n}-{m} of {k} results", "Sort by: Popularity",
           "Add to cart", "Out of stock", "In stock", "${num}.99", "Free shipping", "★★★★☆ ({n} reviews)",
           "Quick view", "Compare", "Wishlist", "SKU: {num}", "Filter by price", "View all"]
STUFF_WORDS = ["best", "cheap", "top", "free", "online", "buy", "discount", "deal", "sale", "review", "2024",
               "near me", "official", "guaranteed", "fast", "new", "hot", "trending", "download", "price"]
FOREIGN_SPAM = {
    "de": ["Jetzt kaufen", "Günstig bestellen", "Kostenloser Versand", "Alle Rechte vorbehalten", "Startseite",
           "Impressum", "Datenschutz", "Warenkorb", "Anmelden", "Wir verwenden Cookies", "Mehr erfahren",
           "Angebot nur heute", "Bester Preis garantiert"],
    "fr": ["Acheter maintenant", "Livraison gratuite", "Tous droits réservés", "Accueil", "Mentions légales",
           "Panier", "Connexion", "Nous utilisons des cookies", "En savoir plus", "Offre limitée", "Meilleur prix"],
    "es": ["Comprar ahora", "Envío gratis", "Todos los derechos reservados", "Inicio", "Aviso legal", "Carrito",
           "Iniciar sesión", "Usamos cookies", "Leer más", "Oferta limitada", "Mejor precio"],
    "it": ["Acquista ora", "Spedizione gratuita", "Tutti i diritti riservati", "Home", "Carrello", "Accedi",
           "Utilizziamo i cookie", "Scopri di più", "Offerta limitata"],
    "pt": ["Compre agora", "Frete grátis", "Todos os direitos reservados", "Início", "Carrinho", "Entrar",
           "Usamos cookies", "Saiba mais", "Oferta limitada"],
    "ja": ["今すぐ購入", "送料無料", "ログイン", "カート", "ホーム", "お問い合わせ", "クッキーを使用しています", "詳しくはこちら", "限定セール"],
    "zh-cn": ["立即购买", "免费送货", "登录", "购物车", "首页", "联系我们", "我们使用cookie", "了解更多", "限时优惠", "版权所有"],
}
BRANDS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Tyrell", "Cyberdyne"]


def _fill(rng: random.Random, t: str) -> str:
    p = rng.choice(SPAM_PRODUCTS)
    return t.format(p=p, P=p.upper(), year=rng.randint(2015, 2026), num=rng.randint(10, 9999),
                    brand=rng.choice(BRANDS), n=rng.randint(1, 20), m=rng.randint(20, 99), k=rng.randint(100, 999))


def _lines(rng: random.Random, pool: list[str], k: int) -> list[str]:
    return [_fill(rng, rng.choice(pool)) for _ in range(k)]


def generate(rng: random.Random, kind: str, salad_source: list[str] | None = None) -> str:
    if kind == "nav":
        lines = [" | ".join(rng.sample(NAV, rng.randint(4, 10))) for _ in range(rng.randint(2, 6))]
        lines += _lines(rng, COOKIE + FOOTER, rng.randint(3, 10))
    elif kind == "cookie":
        lines = _lines(rng, COOKIE, rng.randint(4, 12)) + _lines(rng, FOOTER, rng.randint(1, 4))
    elif kind == "spam":
        lines = _lines(rng, SPAM_TEMPLATES, rng.randint(5, 25))
    elif kind == "stuffing":
        p = rng.choice(SPAM_PRODUCTS)
        words = [rng.choice(STUFF_WORDS + [p] * 5) for _ in range(rng.randint(60, 300))]
        lines = [" ".join(words[i:i + 12]) for i in range(0, len(words), 12)]
    elif kind == "comments":
        lines = [f"{rng.choice(['John', 'anna_k', 'guest', 'user' + str(rng.randint(1, 999)), 'Mike', 'seo_pro'])} "
                 f"says: {rng.choice(COMMENTS)} {rng.choice(['', 'Reply', 'Reply ↓', '(' + str(rng.randint(1, 59)) + ' minutes ago)'])}"
                 for _ in range(rng.randint(5, 30))]
    elif kind == "listing":
        lines = []
        for _ in range(rng.randint(5, 20)):
            lines.append(f"{rng.choice(BRANDS)} {rng.choice(SPAM_PRODUCTS).title()} {rng.randint(1, 500)}")
            lines += _lines(rng, LISTING, rng.randint(2, 5))
    elif kind == "tags":
        lines = [", ".join(rng.choice(STUFF_WORDS + SPAM_PRODUCTS + NAV) for _ in range(rng.randint(20, 80)))]
    elif kind == "foreign":
        lang = rng.choice(sorted(FOREIGN_SPAM))
        pool = FOREIGN_SPAM[lang]
        lines = [" | ".join(rng.sample(pool, min(len(pool), rng.randint(3, 8)))) for _ in range(rng.randint(4, 15))]
    elif kind == "salad" and salad_source:
        words = rng.choice(salad_source).split()
        rng.shuffle(words)
        lines = [" ".join(words[i:i + rng.randint(8, 20)]) for i in range(0, len(words), 14)]
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return "\n".join(lines)


KINDS = ("nav", "cookie", "spam", "stuffing", "comments", "listing", "tags", "foreign", "salad")


def negatives(n: int, seed: int = 0, salad_source: list[str] | None = None) -> list[str]:
    rng = random.Random(seed)
    kinds = [k for k in KINDS if k != "salad" or salad_source]
    return [generate(rng, kinds[i % len(kinds)], salad_source) for i in range(n)]
