"""Chart vocabulary in six languages: category names, series names, titles and axis labels.

Every entry is a dict language -> text (or list of texts) for en, fr, de, es, ja, zh. Kept as
plain data so a reviewer can check the translations and add a language by adding one key.
"""
from __future__ import annotations

LANGUAGES = ("en", "fr", "de", "es", "ja", "zh")
CJK = ("ja", "zh")

MONTHS = {
    "en": ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
    "fr": ["janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc."],
    "de": ["Jan", "Feb", "Mär", "Apr", "Mai", "Jun", "Jul", "Aug", "Sep", "Okt", "Nov", "Dez"],
    "es": ["ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic"],
    "ja": [f"{i}月" for i in range(1, 13)],
    "zh": [f"{i}月" for i in range(1, 13)],
}
WEEKDAYS = {
    "en": ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
    "fr": ["lun.", "mar.", "mer.", "jeu.", "ven.", "sam.", "dim."],
    "de": ["Mo", "Di", "Mi", "Do", "Fr", "Sa", "So"],
    "es": ["lun", "mar", "mié", "jue", "vie", "sáb", "dom"],
    "ja": ["月", "火", "水", "木", "金", "土", "日"],
    "zh": ["周一", "周二", "周三", "周四", "周五", "周六", "周日"],
}
QUARTERS = {
    "en": ["Q1", "Q2", "Q3", "Q4"], "fr": ["T1", "T2", "T3", "T4"], "de": ["Q1", "Q2", "Q3", "Q4"],
    "es": ["T1", "T2", "T3", "T4"], "ja": ["第1四半期", "第2四半期", "第3四半期", "第4四半期"],
    "zh": ["第一季度", "第二季度", "第三季度", "第四季度"],
}
CITIES = {
    "en": ["London", "Paris", "Berlin", "Madrid", "Tokyo", "Beijing", "Rome", "Vienna"],
    "fr": ["Londres", "Paris", "Berlin", "Madrid", "Tokyo", "Pékin", "Rome", "Vienne"],
    "de": ["London", "Paris", "Berlin", "Madrid", "Tokio", "Peking", "Rom", "Wien"],
    "es": ["Londres", "París", "Berlín", "Madrid", "Tokio", "Pekín", "Roma", "Viena"],
    "ja": ["ロンドン", "パリ", "ベルリン", "マドリード", "東京", "北京", "ローマ", "ウィーン"],
    "zh": ["伦敦", "巴黎", "柏林", "马德里", "东京", "北京", "罗马", "维也纳"],
}
COUNTRIES = {
    "en": ["France", "Germany", "Spain", "Japan", "China", "Brazil", "Canada", "Kenya"],
    "fr": ["France", "Allemagne", "Espagne", "Japon", "Chine", "Brésil", "Canada", "Kenya"],
    "de": ["Frankreich", "Deutschland", "Spanien", "Japan", "China", "Brasilien", "Kanada", "Kenia"],
    "es": ["Francia", "Alemania", "España", "Japón", "China", "Brasil", "Canadá", "Kenia"],
    "ja": ["フランス", "ドイツ", "スペイン", "日本", "中国", "ブラジル", "カナダ", "ケニア"],
    "zh": ["法国", "德国", "西班牙", "日本", "中国", "巴西", "加拿大", "肯尼亚"],
}
ENERGY = {
    "en": ["Solar", "Wind", "Hydro", "Nuclear", "Gas", "Coal"],
    "fr": ["Solaire", "Éolien", "Hydraulique", "Nucléaire", "Gaz", "Charbon"],
    "de": ["Solar", "Wind", "Wasser", "Kernkraft", "Gas", "Kohle"],
    "es": ["Solar", "Eólica", "Hidráulica", "Nuclear", "Gas", "Carbón"],
    "ja": ["太陽光", "風力", "水力", "原子力", "ガス", "石炭"],
    "zh": ["太阳能", "风能", "水电", "核能", "天然气", "煤炭"],
}
SUBJECTS = {
    "en": ["Math", "Physics", "History", "Biology", "Art", "Music"],
    "fr": ["Maths", "Physique", "Histoire", "Biologie", "Art", "Musique"],
    "de": ["Mathe", "Physik", "Geschichte", "Biologie", "Kunst", "Musik"],
    "es": ["Matemáticas", "Física", "Historia", "Biología", "Arte", "Música"],
    "ja": ["数学", "物理", "歴史", "生物", "美術", "音楽"],
    "zh": ["数学", "物理", "历史", "生物", "美术", "音乐"],
}
REGIONS = {
    "en": ["North", "South", "East", "West", "Central"],
    "fr": ["Nord", "Sud", "Est", "Ouest", "Centre"],
    "de": ["Nord", "Süd", "Ost", "West", "Mitte"],
    "es": ["Norte", "Sur", "Este", "Oeste", "Centro"],
    "ja": ["北部", "南部", "東部", "西部", "中部"],
    "zh": ["北部", "南部", "东部", "西部", "中部"],
}
FRUITS = {
    "en": ["Apples", "Pears", "Cherries", "Plums", "Grapes", "Oranges"],
    "fr": ["Pommes", "Poires", "Cerises", "Prunes", "Raisins", "Oranges"],
    "de": ["Äpfel", "Birnen", "Kirschen", "Pflaumen", "Trauben", "Orangen"],
    "es": ["Manzanas", "Peras", "Cerezas", "Ciruelas", "Uvas", "Naranjas"],
    "ja": ["りんご", "なし", "さくらんぼ", "プラム", "ぶどう", "オレンジ"],
    "zh": ["苹果", "梨", "樱桃", "李子", "葡萄", "橙子"],
}
# Invented names: the same in every language.
BRANDS = ["Aurora", "Borealis", "Cobalt", "Dune", "Ember", "Fjord", "Granite", "Helix"]


def product_names(lang: str) -> list[str]:
    word = {"en": "Product", "fr": "Produit", "de": "Produkt", "es": "Producto", "ja": "製品", "zh": "产品"}[lang]
    sep = "" if lang in CJK else " "
    return [f"{word}{sep}{c}" for c in "ABCDEF"]


def class_names(lang: str) -> list[str]:
    word = {"en": "Class", "fr": "Classe", "de": "Klasse", "es": "Clase", "ja": "クラス", "zh": "班级"}[lang]
    sep = "" if lang in CJK else " "
    return [f"{word}{sep}{c}" for c in "ABCDE"]


AXIS = {
    "month": {"en": "Month", "fr": "Mois", "de": "Monat", "es": "Mes", "ja": "月", "zh": "月份"},
    "year": {"en": "Year", "fr": "Année", "de": "Jahr", "es": "Año", "ja": "年", "zh": "年份"},
    "quarter": {"en": "Quarter", "fr": "Trimestre", "de": "Quartal", "es": "Trimestre", "ja": "四半期", "zh": "季度"},
    "day": {"en": "Day", "fr": "Jour", "de": "Tag", "es": "Día", "ja": "曜日", "zh": "星期"},
    "subject": {"en": "Subject", "fr": "Matière", "de": "Fach", "es": "Asignatura", "ja": "科目", "zh": "科目"},
    "region": {"en": "Region", "fr": "Région", "de": "Region", "es": "Región", "ja": "地域", "zh": "地区"},
    "fruit": {"en": "Fruit", "fr": "Fruit", "de": "Obst", "es": "Fruta", "ja": "果物", "zh": "水果"},
    "count": {"en": "Count", "fr": "Effectif", "de": "Anzahl", "es": "Frecuencia", "ja": "度数", "zh": "频数"},
}

# topic -> title and value label per language; unit is shown in the axis label.
TOPIC_TEXT = {
    "temperature": {"en": "Average temperature", "fr": "Température moyenne", "de": "Durchschnittstemperatur",
                    "es": "Temperatura media", "ja": "平均気温", "zh": "平均气温"},
    "rainfall": {"en": "Monthly rainfall", "fr": "Précipitations mensuelles", "de": "Monatlicher Niederschlag",
                 "es": "Precipitación mensual", "ja": "月間降水量", "zh": "月降水量"},
    "sales": {"en": "Quarterly sales", "fr": "Ventes trimestrielles", "de": "Quartalsumsatz",
              "es": "Ventas trimestrales", "ja": "四半期の販売数", "zh": "季度销量"},
    "revenue": {"en": "Annual revenue", "fr": "Chiffre d'affaires annuel", "de": "Jahresumsatz",
                "es": "Ingresos anuales", "ja": "年間売上高", "zh": "年收入"},
    "population": {"en": "Population", "fr": "Population", "de": "Bevölkerung", "es": "Población",
                   "ja": "人口", "zh": "人口"},
    "energy": {"en": "Electricity generation", "fr": "Production d'électricité", "de": "Stromerzeugung",
               "es": "Generación eléctrica", "ja": "発電量", "zh": "发电量"},
    "visitors": {"en": "Website visitors", "fr": "Visiteurs du site", "de": "Website-Besucher",
                 "es": "Visitantes del sitio", "ja": "サイト訪問者数", "zh": "网站访客"},
    "scores": {"en": "Average exam score", "fr": "Note moyenne à l'examen", "de": "Durchschnittliche Prüfungsnote",
               "es": "Nota media del examen", "ja": "試験の平均点", "zh": "考试平均分"},
    "market_share": {"en": "Market share", "fr": "Part de marché", "de": "Marktanteil", "es": "Cuota de mercado",
                     "ja": "市場シェア", "zh": "市场份额"},
    "harvest": {"en": "Fruit harvest", "fr": "Récolte de fruits", "de": "Obsternte", "es": "Cosecha de fruta",
                "ja": "果物の収穫量", "zh": "水果产量"},
    "commute": {"en": "Commute time", "fr": "Temps de trajet", "de": "Pendelzeit", "es": "Tiempo de viaje",
                "ja": "通勤時間", "zh": "通勤时间"},
    "height_weight": {"en": "Height and weight", "fr": "Taille et poids", "de": "Größe und Gewicht",
                      "es": "Altura y peso", "ja": "身長と体重", "zh": "身高与体重"},
    "ads_sales": {"en": "Advertising and sales", "fr": "Publicité et ventes", "de": "Werbung und Umsatz",
                  "es": "Publicidad y ventas", "ja": "広告費と売上", "zh": "广告与销售"},
    "traffic": {"en": "Traffic by day and hour", "fr": "Trafic par jour et heure", "de": "Verkehr nach Tag und Stunde",
                "es": "Tráfico por día y hora", "ja": "曜日・時間別の交通量", "zh": "按日和小时的交通量"},
}

UNITS = {
    "°C": {l: "°C" for l in LANGUAGES},
    "mm": {l: "mm" for l in LANGUAGES},
    "k units": {"en": "thousand units", "fr": "milliers d'unités", "de": "Tsd. Stück", "es": "miles de unidades",
                "ja": "千個", "zh": "千件"},
    "M EUR": {"en": "million EUR", "fr": "millions d'euros", "de": "Mio. EUR", "es": "millones de euros",
              "ja": "百万ユーロ", "zh": "百万欧元"},
    "M people": {"en": "million people", "fr": "millions d'habitants", "de": "Mio. Einwohner",
                 "es": "millones de personas", "ja": "百万人", "zh": "百万人"},
    "TWh": {l: "TWh" for l in LANGUAGES},
    "k visits": {"en": "thousand visits", "fr": "milliers de visites", "de": "Tsd. Besuche", "es": "miles de visitas",
                 "ja": "千回", "zh": "千次"},
    "points": {"en": "points", "fr": "points", "de": "Punkte", "es": "puntos", "ja": "点", "zh": "分"},
    "%": {l: "%" for l in LANGUAGES},
    "t": {"en": "tonnes", "fr": "tonnes", "de": "Tonnen", "es": "toneladas", "ja": "トン", "zh": "吨"},
    "min": {"en": "minutes", "fr": "minutes", "de": "Minuten", "es": "minutos", "ja": "分", "zh": "分钟"},
    "cm": {l: "cm" for l in LANGUAGES},
    "kg": {l: "kg" for l in LANGUAGES},
    "k EUR": {"en": "thousand EUR", "fr": "milliers d'euros", "de": "Tsd. EUR", "es": "miles de euros",
              "ja": "千ユーロ", "zh": "千欧元"},
    "cars/h": {"en": "cars per hour", "fr": "voitures par heure", "de": "Autos pro Stunde", "es": "coches por hora",
               "ja": "台/時", "zh": "辆/小时"},
}

QUANTITY = {  # axis word for the measured quantity of scatter plots
    "height": {"en": "Height", "fr": "Taille", "de": "Größe", "es": "Altura", "ja": "身長", "zh": "身高"},
    "weight": {"en": "Weight", "fr": "Poids", "de": "Gewicht", "es": "Peso", "ja": "体重", "zh": "体重"},
    "ads": {"en": "Advertising", "fr": "Publicité", "de": "Werbung", "es": "Publicidad", "ja": "広告費", "zh": "广告费"},
    "sales": {"en": "Sales", "fr": "Ventes", "de": "Umsatz", "es": "Ventas", "ja": "売上", "zh": "销售额"},
    "hour": {"en": "Hour", "fr": "Heure", "de": "Stunde", "es": "Hora", "ja": "時", "zh": "小时"},
}

GROUPS = {"adults": {"en": "Adults", "fr": "Adultes", "de": "Erwachsene", "es": "Adultos", "ja": "成人", "zh": "成人"},
          "teens": {"en": "Teenagers", "fr": "Adolescents", "de": "Jugendliche", "es": "Adolescentes",
                    "ja": "十代", "zh": "青少年"}}


def axis_label(word: str, unit: str, lang: str) -> str:
    """'Temperature (°C)' style label with the unit in the chart's language."""
    return f"{word} ({UNITS[unit][lang]})" if unit else word
