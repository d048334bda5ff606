"""Stop words for the topics of an entity split: scikit-learn's English list and a Spanish list (the words that
carry no topic: articles, pronouns, prepositions, conjunctions, common adverbs and the forms of ser, estar, haber
and tener). Topics are found from words of four letters or more; a part's name may take words of three."""

from __future__ import annotations

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

SPANISH = frozenset("""
algo algun alguna algunas alguno algunos ambos ante antes aquel aquella aquellas aquello aquellos aqui aquí
asi así aunque bajo bien cada casi cierta ciertas cierto ciertos como cómo con contra cual cuál cuales cuáles
cualquier cuando cuándo cuanto cuánto cuantos cuántos desde donde dónde dos durante ella ellas ello ellos entonces
entre esas esos esta está estaba estabais estábamos estaban estabas estad estada estadas estado estados estais
estáis estamos estan están estando estar estará estarán estarás estaré estaréis estaremos estaría estaríais
estaríamos estarían estarías estas estás este esté estéis estemos estén estés esto estos estoy estuve estuviera
estuvierais estuviéramos estuvieran estuvieras estuvieron estuviese estuvieseis estuviésemos estuviesen
estuvieses estuvimos estuviste estuvisteis estuvo fuera fuerais fuéramos fueran fueras fueron fuese fueseis
fuésemos fuesen fueses fuimos fuiste fuisteis había habíais habíamos habían habías habida habidas habido habidos
habiendo habrá habrán habrás habré habréis habremos habría habríais habríamos habrían habrías hacer hacia hasta
haya hayáis hayamos hayan hayas hemos hube hubiera hubierais hubiéramos hubieran hubieras hubieron hubiese
hubieseis hubiésemos hubiesen hubieses hubimos hubiste hubisteis hubo luego mais mediante menos mientras mismo
misma mismas mismos mucha muchas mucho muchos muy nada nadie ninguna ningunas ninguno ningunos nosotras nosotros
nuestra nuestras nuestro nuestros nunca otra otras otro otros para pero poca pocas poco pocos porque porqué
puede pueden pues quien quién quienes quiénes sean seáis seamos sean seas sera será serán serás seré seréis
seremos sería seríais seríamos serían serías siempre siendo sino sobre sois solamente solo sólo somos suya
suyas suyo suyos también tampoco tanta tantas tanto tantos tendrá tendrán tendrás tendré tendréis tendremos
tendría tendríais tendríamos tendrían tendrías tened tenemos tenéis tenga tengáis tengamos tengan tengas tengo
tenía teníais teníamos tenían tenías tenida tenidas tenido tenidos teniendo tiene tienen tienes toda todas
todavía todo todos tras tuve tuviera tuvierais tuviéramos tuvieran tuvieras tuvieron tuviese tuvieseis
tuviésemos tuviesen tuvieses tuvimos tuviste tuvisteis tuvo tuya tuyas tuyo tuyos unas unos usted ustedes
vosotras vosotros vuestra vuestras vuestro vuestros
del las los una uno unos con por que qué sin sus mis tus nos les era eres fue han hay más mas muy ese esa eso
son ser sea soy ahí allí aún cada dar ver
""".split())

STOP_WORDS = frozenset(ENGLISH_STOP_WORDS) | SPANISH
"""English (scikit-learn) and Spanish stop words, lower case."""
