<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Archive | Cider Mill Gazette</title>
<link rel="stylesheet" href="/static/site.css">
</head>
<body>
<header class="site-header"><a class="brand" href="/">Cider Mill Gazette</a>
<nav class="main-nav"><a href="/">Home</a> <a href="/en/">English</a> <a href="/fr/">Fran&ccedil;ais</a> <a href="/de/">Deutsch</a> <a href="/es/">Espa&ntilde;ol</a> <a href="/ja/">&#26085;&#26412;&#35486;</a> <a href="/zh/">&#20013;&#25991;</a> <a href="/gallery/">Gallery</a> <a href="/data/">Data</a> <a href="/about.html">About</a></nav>
<p class="cookie-banner">We use cookies to remember your language and to count visits. <button type="button">OK</button></p>
</header>
<div class="layout">
<main id="content">
<article>
<h1>Archive</h1>
<p>The archive lists every issue of the Gazette since 2009, ten issues per page.</p>
<p>Use the page links to move through the older issues.</p>
<p><a href="/archive/list.php?page=2">Older issues</a></p>
</article>
</main>
<aside class="sidebar">
<h2>Newsletter</h2>
<p>Subscribe to the Cider Mill Gazette newsletter for seasonal orchard news and recipes.</p>
<form class="newsletter" action="/subscribe" method="get"><input type="email" name="email" placeholder="you@example.com"><button>Subscribe</button></form>
<h2>Popular</h2>
<ul><li><a href="/en/cider-history.html">The long history of cider</a></li><li><a href="/gallery/shapes.html">Shapes gallery</a></li><li><a href="/data/harvest.html">Harvest figures</a></li></ul>
</aside>
</div>
<footer class="site-footer">
<p>&copy; 2024 Cider Mill Gazette. All rights reserved. Reproduction of any part of this site without written permission is prohibited.</p>
<p><a href="/about.html">About</a> &middot; <a href="/contact.html">Contact</a> &middot; <a href="/changelog.html">Changelog</a></p>
</footer>
</body>
</html>
