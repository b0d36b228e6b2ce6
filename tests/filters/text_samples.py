"""Texts written for the text-filter tests (shared by tests/filters and tests/pipelines)."""

EN = ("The orchard sits on a slope above the river, and every spring the blossom turns the hillside white. "
      "Farmers have grown apples here for more than two hundred years, and the oldest trees were planted by "
      "the family that still runs the cider mill. In autumn the fruit is picked by hand, washed in cold water "
      "and pressed slowly, so that the juice keeps the taste of the variety. The mill welcomes visitors who want "
      "to learn how the work is done, and the guides explain why some trees need to be pruned in winter while "
      "others are left alone until the summer. Children can taste the fresh juice before it is fermented, and "
      "the older visitors are offered a glass of the dry cider that made the valley famous.")
FR = ("Le verger se trouve sur une pente au-dessus de la rivière, et chaque printemps les fleurs couvrent la "
      "colline de blanc. Les paysans cultivent des pommes ici depuis plus de deux cents ans, et les plus vieux "
      "arbres ont été plantés par la famille qui dirige encore le pressoir. En automne, les fruits sont cueillis "
      "à la main, lavés dans l'eau froide et pressés lentement, pour que le jus garde le goût de la variété.")
DE = ("Der Obstgarten liegt an einem Hang über dem Fluss, und jedes Frühjahr färbt die Blüte den Hügel weiß. "
      "Seit mehr als zweihundert Jahren bauen die Bauern hier Äpfel an, und die ältesten Bäume wurden von der "
      "Familie gepflanzt, die noch heute die Mosterei betreibt. Im Herbst werden die Früchte von Hand gepflückt, "
      "in kaltem Wasser gewaschen und langsam gepresst, damit der Saft den Geschmack der Sorte behält.")
ES = ("El huerto está en una ladera sobre el río, y cada primavera las flores cubren la colina de blanco. "
      "Los campesinos cultivan manzanas aquí desde hace más de doscientos años, y los árboles más viejos fueron "
      "plantados por la familia que todavía dirige la sidrería. En otoño la fruta se recoge a mano.")
JA = ("果樹園は川を見下ろす斜面にあり、毎年春になると花が丘を白く染めます。この土地では二百年以上前からりんごが"
      "育てられてきました。秋には果実を手で摘み取り、冷たい水で洗ってから、ゆっくりと搾ります。そうすることで、"
      "果汁が品種の味を保つのです。見学に来た人たちは、冬に剪定が必要な木と夏まで手を付けない木の違いを教わります。")
ZH = ("果园位于河流上方的山坡上，每年春天，花朵把整个山坡染成白色。两百多年来，农民一直在这里种植苹果，最古老的"
      "果树是由至今仍经营榨汁厂的那个家族种下的。秋天，果实由人工采摘，在冷水中清洗，然后慢慢压榨，"
      "这样果汁就能保留品种的味道。来参观的人可以了解冬天需要修剪哪些树，而哪些树要留到夏天再处理。")
SPAM = "\n".join(["Buy cheap watches online!!! best price", "BEST REPLICA BAGS - ORDER NOW", "click here click here"] * 12)
EN2 = ("Cider making starts long before the harvest. In late winter the trees are pruned so that light reaches "
       "the centre of each crown, and in spring the growers count the blossom to guess how heavy the crop will be. "
       "During the summer they thin the young fruit, because a tree that carries too many apples gives small and "
       "sour ones. When the apples finally fall, they are left on the grass for a few days to soften, which makes "
       "them easier to press and gives the juice a deeper colour.")
