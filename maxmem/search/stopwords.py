"""Words that carry no topic in a question, in the languages keyword search splits at
spaces: English, German, French and Spanish.

A question's keyword query drops them (hybrid.keyword_terms) unless nothing else is
left. Without them, "cuándo hablo con el estudio sobre el puesto" matches every Spanish
memory holding "con" and "el" twice, and bm25 ranks a short one of those first: the
keyword side then pulls a memory that shares only grammar with the question above the
one the vectors found (bench/multilingual_eval.py). Each language's articles,
pronouns, prepositions, conjunctions, auxiliaries and question words, as people type
them (with and without accents). Words that are also English content words are left
out ("son", "hat", "bin", "man", "fast", "come", "sale", "comment", "os", "era"), and a
language's list applies only to a question in that language (`stop_words_of`), so an
English question keeps "war", "pour", "plus", "AI", "LA" and "ES" too.
"""

from __future__ import annotations

ENGLISH = frozenset(
    """a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t don didn doesn isn wasn aren weren""".split()
)

GERMAN = frozenset(
    """der die das den dem des ein eine einen einem einer eines und oder aber wenn dass
    ob als wie wo wann warum was wer wen wem wessen welche welcher welches welchen
    welchem im ins am ans aufs beim fürs an auf aus bei mit nach von vom zu zum zur für fur über uber
    unter vor um bis durch gegen ohne ich du er sie es wir ihr mich mir dich dir uns
    euch sich mein meine meinen meinem meiner dein deine deinen sein seine seinen ihre
    ihren ihrem unser unsere unseren unserem unserer euer eure ist sind bist war
    waren wird werden wurde wurden habe haben hatte hatten kann können konnen muss
    müssen mussen soll sollen darf dürfen durfen nicht kein keine keinen auch noch
    schon nur sehr da hier jetzt denn doch mal ja""".split()
)

FRENCH = frozenset(
    """le la les l un une des du de d au aux et ou où que qu qui quoi quel quelle quels
    quelles quand pourquoi combien est sont suis es sommes êtes etes ai as avons
    avez ont été ete être etre avoir ce cet cette ces c ça ca je j tu il elle on nous
    vous ils elles m te se lui leur leurs mon ma mes ton ta tes notre nos votre vos sa
    ses à dans sur sous avec sans pour par en y ne n pas plus très tres aussi si peut peux
    pouvons doit dois devons faut""".split()
)

SPANISH = frozenset(
    """el la los las lo un una unos unas y e o u de del al en con sin por para que qué
    quien quién quienes cual cuál cuales cuáles cuando cuándo donde dónde adónde como
    cómo cuanto cuánto cuánta cuántos cuántas porque es soy eres somos está esta están
    estan estoy estamos fue hay ha han hemos te se nos le les mi mis tu tus su
    sus nuestro nuestra nuestros nuestras este estos estas ese esa eso esto muy más mas
    ya sí si pero también tambien puedo puede podemos debo debe debemos""".split()
)

STOP_WORDS = ENGLISH | GERMAN | FRENCH | SPANISH
OTHERS = (GERMAN, FRENCH, SPANISH)
LEAD = 2  # how many more of a question's words another language's list must hold than English's


def stop_words_of(words: list[str]) -> frozenset[str]:
    """The stop words of a question made of `words` (lowercased): English's, and those of
    each other language whose list holds at least LEAD more of its words than English's
    does (a question in German is mostly German grammar; an English one is not)."""
    english = sum(w in ENGLISH for w in words)
    found = ENGLISH
    for language in OTHERS:
        if sum(w in language for w in words) >= english + LEAD:
            found = found | language
    return found
