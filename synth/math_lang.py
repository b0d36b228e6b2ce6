"""Wording of the synthetic math problems and solution steps in en, fr, de and es.

Kept as plain data (one dict per phrase, language -> template) so a reviewer can check a
translation and a language is added by adding one key to each entry. Numbers and formulas
are not translated: they are shared by all languages.
"""
from __future__ import annotations

LANGUAGES = ("en", "fr", "de", "es")

T: dict[str, dict[str, str]] = {
    # table word problems
    "table_intro": {"en": "Here is the table \"{title}\":", "fr": "Voici le tableau « {title} » :",
                    "de": "Hier ist die Tabelle „{title}“:", "es": "Esta es la tabla «{title}»:"},
    "q_total": {"en": "What is the total of \"{col}\" over all rows{where}?",
                "fr": "Quel est le total de « {col} » sur toutes les lignes{where} ?",
                "de": "Wie groß ist die Summe von „{col}“ über alle Zeilen{where}?",
                "es": "¿Cuál es el total de «{col}» en todas las filas{where}?"},
    "q_mean": {"en": "What is the mean of \"{col}\" over all rows{where}?",
               "fr": "Quelle est la moyenne de « {col} » sur toutes les lignes{where} ?",
               "de": "Wie groß ist der Mittelwert von „{col}“ über alle Zeilen{where}?",
               "es": "¿Cuál es la media de «{col}» en todas las filas{where}?"},
    "q_range": {"en": "How much larger is the largest value of \"{col}\" than the smallest?",
                "fr": "De combien la plus grande valeur de « {col} » dépasse-t-elle la plus petite ?",
                "de": "Um wie viel ist der größte Wert von „{col}“ größer als der kleinste?",
                "es": "¿Cuánto mayor es el valor más grande de «{col}» que el más pequeño?"},
    "where": {"en": " where \"{key}\" is {val}", "fr": " où « {key} » vaut {val}",
              "de": ", in denen „{key}“ gleich {val} ist", "es": " donde «{key}» es {val}"},
    "add_values": {"en": "Add the values", "fr": "On additionne les valeurs", "de": "Die Werte addieren",
                   "es": "Sumamos los valores"},
    "divide_count": {"en": "Divide by the number of rows ({n})", "fr": "On divise par le nombre de lignes ({n})",
                     "de": "Durch die Anzahl der Zeilen ({n}) teilen", "es": "Dividimos entre el número de filas ({n})"},
    "largest_minus_smallest": {"en": "Largest minus smallest", "fr": "Plus grande moins plus petite",
                               "de": "Größter minus kleinster Wert", "es": "Mayor menos menor"},
    # algebra
    "q_linear": {"en": "Solve for x: {eq}", "fr": "Résoudre en x : {eq}", "de": "Löse nach x auf: {eq}",
                 "es": "Resuelve para x: {eq}"},
    "q_quadratic": {"en": "Find all real solutions of {eq}", "fr": "Trouver toutes les solutions réelles de {eq}",
                    "de": "Finde alle reellen Lösungen von {eq}", "es": "Halla todas las soluciones reales de {eq}"},
    "q_system": {"en": "Solve the system: {eq1} and {eq2}", "fr": "Résoudre le système : {eq1} et {eq2}",
                 "de": "Löse das Gleichungssystem: {eq1} und {eq2}", "es": "Resuelve el sistema: {eq1} y {eq2}"},
    "collect_x": {"en": "Coefficient of x after moving x terms left", "fr": "Coefficient de x après regroupement à gauche",
                  "de": "Koeffizient von x, alle x-Terme links", "es": "Coeficiente de x al pasar los términos en x a la izquierda"},
    "collect_const": {"en": "Constant after moving numbers right", "fr": "Constante après regroupement à droite",
                      "de": "Konstante, alle Zahlen rechts", "es": "Constante al pasar los números a la derecha"},
    "divide_coef": {"en": "Divide by the coefficient to get x", "fr": "On divise par le coefficient pour obtenir x",
                    "de": "Durch den Koeffizienten teilen ergibt x", "es": "Dividimos entre el coeficiente para obtener x"},
    "discriminant": {"en": "Discriminant b^2 - 4ac", "fr": "Discriminant b^2 - 4ac", "de": "Diskriminante b^2 - 4ac",
                     "es": "Discriminante b^2 - 4ac"},
    "root_disc": {"en": "Square root of the discriminant", "fr": "Racine carrée du discriminant",
                  "de": "Wurzel der Diskriminante", "es": "Raíz cuadrada del discriminante"},
    "root_plus": {"en": "First solution x1", "fr": "Première solution x1", "de": "Erste Lösung x1",
                  "es": "Primera solución x1"},
    "root_minus": {"en": "Second solution x2", "fr": "Seconde solution x2", "de": "Zweite Lösung x2",
                   "es": "Segunda solución x2"},
    "det": {"en": "Determinant", "fr": "Déterminant", "de": "Determinante", "es": "Determinante"},
    "det_x": {"en": "Determinant with the x column replaced", "fr": "Déterminant avec la colonne x remplacée",
              "de": "Determinante mit ersetzter x-Spalte", "es": "Determinante con la columna x sustituida"},
    "det_y": {"en": "Determinant with the y column replaced", "fr": "Déterminant avec la colonne y remplacée",
              "de": "Determinante mit ersetzter y-Spalte", "es": "Determinante con la columna y sustituida"},
    "cramer_x": {"en": "x (Cramer's rule)", "fr": "x (règle de Cramer)", "de": "x (Cramersche Regel)",
                 "es": "x (regla de Cramer)"},
    "cramer_y": {"en": "y (Cramer's rule)", "fr": "y (règle de Cramer)", "de": "y (Cramersche Regel)",
                 "es": "y (regla de Cramer)"},
    # units
    "q_units": {"en": "Convert {q} {a} to {c}.", "fr": "Convertir {q} {a} en {c}.", "de": "Rechne {q} {a} in {c} um.",
                "es": "Convierte {q} {a} a {c}."},
    "convert_to": {"en": "In {u} (1 {big} = {f} {small})", "fr": "En {u} (1 {big} = {f} {small})",
                   "de": "In {u} (1 {big} = {f} {small})", "es": "En {u} (1 {big} = {f} {small})"},
    # probability
    "q_dice_sum": {"en": "Two fair six-sided dice are rolled. What is the probability that the sum is {k}?",
                   "fr": "On lance deux dés équilibrés à six faces. Quelle est la probabilité que la somme vaille {k} ?",
                   "de": "Zwei faire sechsseitige Würfel werden geworfen. Wie groß ist die Wahrscheinlichkeit, dass die Summe {k} ist?",
                   "es": "Se lanzan dos dados justos de seis caras. ¿Cuál es la probabilidad de que la suma sea {k}?"},
    "q_dice_six": {"en": "{n} fair six-sided dice are rolled. What is the probability of at least one six?",
                   "fr": "On lance {n} dés équilibrés à six faces. Quelle est la probabilité d'obtenir au moins un six ?",
                   "de": "{n} faire sechsseitige Würfel werden geworfen. Wie groß ist die Wahrscheinlichkeit für mindestens eine Sechs?",
                   "es": "Se lanzan {n} dados justos de seis caras. ¿Cuál es la probabilidad de sacar al menos un seis?"},
    "q_cards": {"en": "{n} cards are drawn without replacement from a standard 52-card deck. What is the probability that all of them are {what}?",
                "fr": "On tire {n} cartes sans remise d'un jeu standard de 52 cartes. Quelle est la probabilité qu'elles soient toutes des {what} ?",
                "de": "Aus einem Standardblatt mit 52 Karten werden {n} Karten ohne Zurücklegen gezogen. Wie groß ist die Wahrscheinlichkeit, dass alle {what} sind?",
                "es": "Se sacan {n} cartas sin reemplazo de una baraja estándar de 52 cartas. ¿Cuál es la probabilidad de que todas sean {what}?"},
    "hearts": {"en": "hearts", "fr": "cœurs", "de": "Herz", "es": "corazones"},
    "aces": {"en": "aces", "fr": "as", "de": "Asse", "es": "ases"},
    "q_urn": {"en": "An urn holds {r} red and {b} blue balls. {n} balls are drawn without replacement. What is the probability that exactly {k} are red?",
              "fr": "Une urne contient {r} boules rouges et {b} bleues. On tire {n} boules sans remise. Quelle est la probabilité qu'exactement {k} soient rouges ?",
              "de": "Eine Urne enthält {r} rote und {b} blaue Kugeln. {n} Kugeln werden ohne Zurücklegen gezogen. Wie groß ist die Wahrscheinlichkeit, dass genau {k} rot sind?",
              "es": "Una urna tiene {r} bolas rojas y {b} azules. Se sacan {n} bolas sin reemplazo. ¿Cuál es la probabilidad de que exactamente {k} sean rojas?"},
    "ways_fav": {"en": "Favourable outcomes", "fr": "Issues favorables", "de": "Günstige Ergebnisse",
                 "es": "Casos favorables"},
    "ways_all": {"en": "All outcomes", "fr": "Toutes les issues", "de": "Alle Ergebnisse", "es": "Casos posibles"},
    "ways_red": {"en": "Ways to choose the red balls", "fr": "Façons de choisir les boules rouges",
                 "de": "Möglichkeiten, die roten Kugeln zu wählen", "es": "Formas de elegir las bolas rojas"},
    "ways_blue": {"en": "Ways to choose the blue balls", "fr": "Façons de choisir les boules bleues",
                  "de": "Möglichkeiten, die blauen Kugeln zu wählen", "es": "Formas de elegir las bolas azules"},
    "p_none": {"en": "Probability of no six", "fr": "Probabilité de n'avoir aucun six",
               "de": "Wahrscheinlichkeit für keine Sechs", "es": "Probabilidad de ningún seis"},
    "p_complement": {"en": "Complement", "fr": "Complémentaire", "de": "Gegenereignis", "es": "Complemento"},
    "probability": {"en": "Probability", "fr": "Probabilité", "de": "Wahrscheinlichkeit", "es": "Probabilidad"},
    # solution frame
    "solution": {"en": "Solution:", "fr": "Solution :", "de": "Lösung:", "es": "Solución:"},
    "answer": {"en": "Answer:", "fr": "Réponse :", "de": "Antwort:", "es": "Respuesta:"},
}


def t(phrase: str, lang: str, **kw) -> str:
    return T[phrase][lang].format(**kw)
