"""Small German/English word lists for capture: stopwords (themes), an emotion lexicon mapped onto the
eight Plutchik sectors, and the cue words that mark a name as a person or a place. Kept small and
hand-checked: capture runs on every message and must stay regex/lexicon fast."""

from __future__ import annotations

STOPWORDS_EN = frozenset("""
a about above after again against all almost also although always am among an and another any anybody anyone
anything anyway anywhere are aren around as ask asked at away back be became because become been before being
below best better between big both but by came can cannot cant could couldn did didn do does doesn doing done
don down during each either else enough even ever every everyone everything except few find first for found
from full further get gets getting give given go goes going gone good got great had hadn has hasn have haven
having he her here hers herself him himself his how however i if im in into is isn it its itself ive just keep
kind know last least less let like likely little lot lots made make makes making many may maybe me might mine
more most much must my myself need needs never new next nice no nobody none nor not nothing now of off often
oh ok okay old on once one only or other others our ours ourselves out over own part people perhaps please
pretty put quite rather really right said same saw say says see seem seems seen several shall she should
shouldn show since so some somebody someone something sometimes somewhat soon sort still such sure take taken
tell than thank thanks that thats the their theirs them themselves then there these they thing things think
this those though thought through thus to today together told tomorrow too took toward try trying two under
until up upon us use used using very via want wanted wants was wasn way we well went were weren what whatever
when where whether which while who whole whom whose why will with within without won would wouldn yeah yes yet
you your yours yourself yourselves also im ive id youre youve dont doesnt didnt cant wont isnt arent wasnt
hey hi hello yesterday tonight morning evening afternoon night week weeks month months year years day days
time times minute minutes hour hours ago sounds sound help helpful answer question questions tips suggestions
recommend recommendations example examples different specific able include including consider important
however additionally overall certainly absolutely definitely glad happy here's let's that's it's i'm i've
ve ll re
""".split())

STOPWORDS_DE = frozenset("""
aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes anders auch auf
aus bei beim bin bis bist bitte bloss da dabei dadurch dafür dagegen daher dahin damals damit danach daneben
dann daran darauf daraus darf darfst darin darum darunter das dass dasselbe davon davor dazu dein deine deinem
deinen deiner deines dem demselben den denn der derselbe des deshalb desselben dessen dich die dies diese
dieselbe dieselben diesem diesen dieser dieses dir doch dort du durch eben ebenso eigentlich ein eine einem
einen einer eines einfach einige einigem einigen einiger einiges einmal er es etwa etwas euch euer eure eurem
euren eurer eures für gab gar gegen gehabt geht gemacht genau gerade gern gewesen gibt ging gut habe haben
hast hat hatte hatten heute hier hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer ihres im immer in
indem ins ist ja jede jedem jeden jeder jedes jemand jetzt kann kannst kaum kein keine keinem keinen keiner
keines klar können könnte lang lassen mal man manche manchem manchen mancher manches mehr mein meine meinem
meinen meiner meines mich mir mit muss musst müssen nach nachdem nein nicht nichts noch nun nur ob oder ohne
sehr sein seine seinem seinen seiner seines seit selbst sich sie sind so sogar solche solchem solchen solcher
solches soll sollen sollte sondern sonst über um und uns unser unsere unserem unseren unserer unseres unter
viel viele vom von vor wann war waren warst warum was weil weiter welche welchem welchen welcher welches
wenn wer werde werden wie wieder will wir wird wirst wo wohl wollen wollte worden wurde wurden zu zum zur
zwar zwischen schon echt halt eher ganz total okay ok hallo danke gestern morgen übermorgen vorgestern abend
woche wochen monat monate jahr jahre tag tage stunde stunden minute minuten uhr mache machen macht gehen
gehe fand finde findet sagen sagt sagte weiß wissen glaube denke meinte neu neue neuen neuer neues alt alte alten
komme kommt kommen kam vorbei gleich bald lange wirklich richtig schön gerne weniger möchte möchten würde würden
hätte hätten wäre wären sollte könnten müsste gesagt gegangen bekommen vielen
""".split())

# "ve", "ll" and "re" are what splitting words at an apostrophe leaves of I've, you'll and we're (the query's
# words are split so, as the full-text column's are).
STOPWORDS = STOPWORDS_EN | STOPWORDS_DE

# How the lexical channel folds a word before it is indexed and looked up, alike in Python (`recall.fold_word`) and
# in PostgreSQL (the `memory_fold` function of migration 0030, which copies these letters): lower case, ß as ss,
# accents and umlauts off, and an e after a, o or u dropped, so "Jürgen", "Juergen" and "Jurgen" are one word (the
# e-rule is applied to every word, on both sides, so it only ever merges spellings, it never splits one).
FOLD_FROM = "äöüáàâãåéèêëíìîïóòôõúùûýÿçñ"
FOLD_TO = "aouaaaaaeeeeiiiioooouuuyycn"

# Words that tell which language a message is in (for rules that only hold in one of them).
LANGUAGE_MARKERS = {
    "de": frozenset("ich und nicht der die das ist mit auf für ein eine mein meine war habe bin wir sie es".split()),
    "en": frozenset("i and not the is with on for a my was have am we they it to of".split()),
}

# label -> Plutchik sector. Labels are what we store as `emotion` (<= 16 chars).
EMOTION_SECTORS = {
    "happy": "joy", "excited": "joy", "proud": "joy",
    "grateful": "trust", "content": "trust", "loved": "trust", "relieved": "trust",
    "stressed": "fear", "anxious": "fear", "afraid": "fear", "insecure": "fear",
    "surprised": "surprise", "amazed": "surprise",
    "sad": "sadness", "lonely": "sadness", "desperate": "sadness", "tired": "sadness",
    "frustrated": "disgust", "disappointed": "disgust", "disgusted": "disgust",
    "angry": "anger", "annoyed": "anger",
    "hopeful": "anticipation", "curious": "anticipation", "eager": "anticipation",
}

# Word stems (lowercase prefixes) -> emotion label. A token matches if it starts with the stem (the longest
# stem wins); a stem ending in "$" must match the whole token; stems with a space match as phrases.
EMOTION_STEMS: dict[str, str] = {
    # joy
    "happy": "happy", "happi": "happy", "glad": "happy", "joy$": "happy", "joyful": "happy", "delight": "happy",
    "wonderful": "happy",
    "awesome": "happy", "fantastic": "happy", "love it": "happy", "froh": "happy", "glücklich": "happy",
    "freue": "happy", "freut": "happy", "freude": "happy", "freuen": "happy", "toll$": "happy",
    "super$": "happy", "enjoy": "happy", "wunderbar": "happy", "genial": "happy",
    "excit": "excited", "thrill": "excited", "begeister": "excited", "aufgeregt": "excited",
    "proud": "proud", "stolz": "proud",
    # trust
    "grateful": "grateful", "thankful": "grateful", "dankbar": "grateful",
    "satisfied": "content", "zufrieden": "content", "calm": "content", "ruhig": "content",
    "relieved": "relieved", "erleichter": "relieved",
    "loved": "loved", "geliebt": "loved",
    # fear
    "stress": "stressed", "overwhelm": "stressed", "gestresst": "stressed", "überfordert": "stressed",
    "anxious": "anxious", "anxiety": "anxious", "nervous": "anxious", "worried": "anxious", "worry": "anxious",
    "nervös": "anxious", "besorgt": "anxious", "sorge$": "anxious", "sorgen$": "anxious",
    "afraid": "afraid", "scared": "afraid", "fear$": "afraid", "fears$": "afraid", "feared": "afraid",
    "angst": "afraid", "ängstlich": "afraid",
    "unsicher": "insecure", "insecure": "insecure", "unsure": "insecure",
    # surprise
    "surpris": "surprised", "überrasch": "surprised", "unexpected": "surprised", "unerwartet": "surprised",
    "amazed": "amazed", "erstaunt": "amazed", "verwundert": "amazed", "wow$": "amazed",
    # sadness
    "sad$": "sad", "sadly$": "sad", "sadness$": "sad", "unhappy": "sad", "traurig": "sad", "trauer": "sad",
    "depress": "sad", "cried": "sad",
    "crying": "sad", "geweint": "sad", "weinen": "sad",
    "lonely": "lonely", "einsam": "lonely", "alone$": "lonely",
    "desperate": "desperate", "hopeless": "desperate", "verzweifel": "desperate",
    "exhausted": "tired", "tired": "tired", "müde": "tired", "erschöpft": "tired",
    # disgust / disappointment
    "frustrat": "frustrated", "genervt": "frustrated",
    "disappoint": "disappointed", "enttäusch": "disappointed",
    "disgust": "disgusted", "eklig": "disgusted", "ekel": "disgusted",
    # anger
    "angry": "angry", "furious": "angry", "mad at": "angry", "wütend": "angry", "wut$": "angry", "sauer": "angry",
    "annoy": "annoyed", "irritat": "annoyed", "ärger": "annoyed", "verärgert": "annoyed",
    # anticipation
    "hope$": "hopeful", "hoping": "hopeful", "hopeful": "hopeful", "hoffe": "hopeful", "hoffnung": "hopeful",
    "looking forward": "eager",
    "can't wait": "eager", "cant wait": "eager", "gespannt": "eager", "vorfreude": "eager",
    "curious": "curious", "neugierig": "curious", "wonder": "curious",
}

EMOJI_EMOTIONS = {
    "😊": "happy", "😀": "happy", "😃": "happy", "😄": "happy", "😁": "happy", "😂": "happy", "🥳": "excited",
    "❤": "loved", "🥰": "loved", "🙏": "grateful", "😌": "relieved", "😰": "anxious", "😨": "afraid",
    "😱": "afraid", "😮": "surprised", "😲": "surprised", "😢": "sad", "😭": "sad", "😞": "disappointed",
    "😒": "annoyed", "😤": "frustrated", "🤢": "disgusted", "😠": "angry", "😡": "angry", "🤞": "hopeful",
    "🤔": "curious", "😴": "tired",
}

NEGATIONS = frozenset("not no never nicht kein keine keinen keinem keiner nie niemals don't didn't isn't wasn't"
                      .split())
# Words that turn a statement into its opposite ("Tom is allergic" / "Tom is not allergic"), for the duplicate rule
# (`capture.fact_marks`): the negations and more of their forms.
DENIALS = NEGATIONS | frozenset(
    "nothing nobody none nor neither cannot can't won't don't doesn't aren't weren't haven't hasn't hadn't shouldn't "
    "wouldn't couldn't mustn't keines nichts niemand".split())

# "my sister Anna", "meine Schwester Anna": a relation word before a name makes it a person.
PERSON_RELATIONS = frozenset("""
friend friends wife husband sister brother mom mum mother dad father son daughter colleague coworker boss
partner boyfriend girlfriend cousin aunt uncle grandma grandmother grandpa grandfather neighbor neighbour
roommate fiance fiancee niece nephew therapist doctor teacher coach kid kids child
freund freundin frau mann schwester bruder mutter mama vater papa sohn tochter kollege kollegin chef chefin
partnerin cousine tante onkel oma opa nachbar nachbarin mitbewohner mitbewohnerin nichte neffe ärztin arzt
lehrer lehrerin trainer trainerin
""".split())
POSSESSIVES = frozenset("my our mein meine meinem meinen meiner unser unsere unserem unseren unserer".split())
PERSON_BEFORE = frozenset("with mit named called namens heißt heisst and und".split())
PERSON_AFTER = frozenset("said says told asked called texted meinte sagte hat hatte and und".split())
PLACE_BEFORE = frozenset("in at to from nach aus near bei visiting visited besucht".split())

# Capitalised words that are not names (sentence starters, calendar words and holidays, interjections, pronouns).
NOT_NAMES = frozenset("""
i i'm i've i'd i'll ok okay yes no hi hey hello thanks thank please sorry well so and but or the a an this
that these those it its my your our their he she we they you what when where why how who which
monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
september october november december today tomorrow yesterday mr mrs ms dr
montag dienstag mittwoch donnerstag freitag samstag sonntag januar februar märz mai juni juli oktober dezember
ich du er sie es wir ihr der die das ein eine und aber oder heute morgen gestern hallo danke bitte ja nein
also english german deutsch englisch christmas easter weihnachten ostern valentine thanksgiving halloween
hanukkah ramadan diwali silvester pfingsten hause versehen
mondays tuesdays wednesdays thursdays fridays saturdays sundays am pm
""".split())

# Nationality and language adjectives: capitalised by English spelling, not names by themselves, but they can
# open a name ("French Laundry", "Chinese New Year").
DEMONYMS = frozenset("""
american british french italian spanish portuguese dutch greek turkish russian polish ukrainian swedish
norwegian danish finnish irish scottish welsh swiss austrian belgian czech hungarian romanian chinese japanese
korean vietnamese thai indian pakistani filipino indonesian mexican brazilian argentinian peruvian colombian
cuban canadian australian african european asian arab arabic persian hebrew latin nordic scandinavian
mediterranean caribbean hawaiian egyptian moroccan ethiopian nigerian hindi mandarin cantonese
französisch italienisch spanisch japanisch chinesisch
""".split())

# Lowercase words that join the parts of one English name or title ("Museum of Modern Art", "Walk for
# Hunger", "Game of Thrones", "Bank of the West"). Cue words (in, to, with, and) are left out: across them
# two names meet ("Anna in Berlin").
NAME_CONNECTORS = frozenset("of for the de del della di da du des la le los las von van der".split())

# Words that ask about what the companion itself said ("the list you provided", "what did you recommend?", "welches
# Bier hast du mir empfohlen?", "deine Antwort"): such a question names the companion, whose replies then hold the
# answer (see brain.memory.recall.addresses_companion). Verbs of saying and giving, in the past or after "did you".
TOLD_EN = ("said mentioned told recommended suggested provided gave listed wrote made proposed explained described "
           "shared offered advised named noted answered replied showed sent").split()
TELL_EN = ("say mention tell recommend suggest provide give list write make propose explain describe share offer "
           "advise name note answer reply show send").split()
YOUR_WORDS_EN = ("answer reply response list suggestion suggestions recommendation recommendations advice message "
                 "explanation move idea ideas words").split()
TOLD_DE = ("gesagt erwähnt empfohlen vorgeschlagen genannt geschrieben gegeben erklärt erzählt aufgezählt "
           "beschrieben geraten gezeigt geschickt geantwortet gemacht").split()
YOUR_WORDS_DE = ("antwort liste vorschlag vorschläge empfehlung empfehlungen rat ratschlag tipp tipps nachricht "
                 "erklärung zug idee ideen worte").split()
