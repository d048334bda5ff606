"""Stop words for the topics of an entity split, the words of a statement and a reflection's search terms: an
English list and a Spanish list (the words that carry no topic: articles, pronouns, prepositions, conjunctions,
common adverbs and the forms of ser, estar, haber and tener). Topics are found from words of four letters or more;
a part's name may take words of three.

The English list is scikit-learn's ``ENGLISH_STOP_WORDS`` (318 words, from the Glasgow Information Retrieval
Group's list), written here so that a program reading statements (the app's review queue does at start) does not
import scikit-learn, about 100 MB resident with SciPy; ``tests/test_curation_split.py`` checks that the two lists
stay equal."""

from __future__ import annotations

ENGLISH = frozenset("""
a about above across after afterwards again against all almost alone along already also although always am among
amongst amoungst amount an and another any anyhow anyone anything anyway anywhere are around as at back be became
because become becomes becoming been before beforehand behind being below beside besides between beyond bill both
bottom but by call can cannot cant co con could couldnt cry de describe detail do done down due during each eg eight
either eleven else elsewhere empty enough etc even ever every everyone everything everywhere except few fifteen
fifty fill find fire first five for former formerly forty found four from front full further get give go had has
hasnt have he hence her here hereafter hereby herein hereupon hers herself him himself his how however hundred i ie
if in inc indeed interest into is it its itself keep last latter latterly least less ltd made many may me meanwhile
might mill mine more moreover most mostly move much must my myself name namely neither never nevertheless next nine
no nobody none noone nor not nothing now nowhere of off often on once one only onto or other others otherwise our
ours ourselves out over own part per perhaps please put rather re same see seem seemed seeming seems serious several
she should show side since sincere six sixty so some somehow someone something sometime sometimes somewhere still
such system take ten than that the their them themselves then thence there thereafter thereby therefore therein
thereupon these they thick thin third this those though three through throughout thru thus to together too top
toward towards twelve twenty two un under until up upon us very via was we well were what whatever when whence
whenever where whereafter whereas whereby wherein whereupon wherever whether which while whither who whoever whole
whom whose why will with within without would yet you your yours yourself yourselves
""".split())

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

STOP_WORDS = ENGLISH | SPANISH
"""English and Spanish stop words, lower case."""
