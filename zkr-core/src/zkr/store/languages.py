"""Which language a text is written in, decided cheaply: by script, then by function words.

The recall index stems and segments each word by its language (:mod:`zkr.store.analysis`); this
module decides that language, for a capture when it is indexed and for a query when it is
searched, with no model and no dictionary:

* **by script** for scripts that (nearly) name one language among those zkr stems: Cyrillic is
  Russian, Arabic script Arabic, Devanagari Hindi, Greek Greek, Armenian Armenian, Tamil Tamil.
  Han, kana and Thai (written without spaces) are segmented, not stemmed
  (:func:`zkr.store.analysis.index_text`), and need no language;
* **Latin script by function words**: each Latin word votes for the languages whose short list
  of the most frequent function words (:data:`FUNCTION_WORDS`) holds it; the language with the
  most votes wins, English on a tie or when nothing votes (English is the index's native
  language: its words go to FTS5's Porter stemmer unchanged). A text is one language: a mixed
  German-and-English paragraph takes the one with more function words.

So a text with several scripts (Russian with English names, Chinese with Latin product names)
is handled word by word: each word by its own script's rule, the Latin words by the text's
Latin language. Deciding costs one set lookup per Latin word (a few microseconds for a sentence).
"""

from __future__ import annotations

import re

__all__ = [
    "ENGLISH",
    "FUNCTION_WORDS",
    "SCRIPT_LANGUAGES",
    "latin_language",
    "script_of",
    "stop_words",
]

ENGLISH = "en"

# English: the recall query's stop words since schema 11 (function and question words).
_ENGLISH = """
    a an the and or but of to in on at for with by from about as into onto over under after
    before during up down out off again further once than then so such too very just also ever
    is are was were be been being am do does did done doing have has had having
    i you he she it we they me him her them my your his its our their mine yours hers ours theirs
    myself yourself himself herself itself ourselves themselves
    what when where which who whom whose why how that this these those there here
    would could should will can may might must shall not no nor yes if any some all each every
    other own same s t d ll m re ve now
"""

# The most frequent function words of each language zkr stems (from the Snowball project's stop
# word lists, cut to articles, pronouns, prepositions, conjunctions, auxiliaries and question
# words). They decide a Latin text's language and are dropped from a query in that language.
_LISTS = {
    ENGLISH: _ENGLISH,
    "de": """
        der die das den dem des ein eine einen einem einer eines und oder aber auch nicht nur
        ist sind war waren wird werden wurde wurden hat haben hatte hatten sein kann können
        im in an am auf aus bei mit nach von vom zu zum zur für über unter um durch gegen
        ich du er sie es wir ihr mich mir dich dir sich uns euch ihn ihm ihnen sein seine ihre
        wer was wann wo wie warum welche welcher welches wieviel wie viele dass als wenn ob
        noch schon sehr so dann denn doch diese dieser dieses jene man
    """,
    "es": """
        el la los las un una unos unas lo al del de y o pero ni que en con por para sin sobre
        entre hasta desde es son era eran fue fueron ser está están estaba ha han había haber
        yo tú él ella nosotros ellos ellas se le les me te nos su sus mi mis tu tus
        qué quién quiénes cuál cuáles cuándo dónde cómo cuánto cuántos cuánta cuántas por qué
        este esta estos estas ese esa esos esas aquel como más muy ya también no sí cuando
    """,
    "fr": """
        le la les un une des du de et ou mais ni que qui quoi dont où en dans par pour sur sous
        avec sans entre vers chez est sont était étaient été être a ont avait avaient avoir fait
        je tu il elle nous vous ils elles se me te lui leur leurs son sa ses mon ma mes ton ta
        quel quelle quels quelles quand comment pourquoi combien ce cette ces cet au aux pas ne
        plus très aussi comme si
    """,
    "it": """
        il lo la i gli le un uno una di del della dei degli delle a al alla ai agli alle da dal
        dalla in nel nella con su sul sulla per tra fra e o ma che chi cui non è sono era erano
        stato stata essere ha hanno aveva avere io tu lui lei noi voi loro si mi ti ci vi suo sua
        suoi sue quale quali quando dove come perché quanto quanti quanta quante questo questa
        quello quella anche più molto
    """,
    "pt": """
        o a os as um uma uns umas de do da dos das em no na nos nas por pelo pela para com sem
        sobre entre até e ou mas que quem qual quais quando onde como porque quanto quantos
        quanta quantas é são era eram foi foram ser estar está estão tem têm tinha ter havia
        eu tu ele ela nós eles elas se me te lhe seu sua seus suas meu minha este esta estes
        estas esse essa isso isto não mais muito também já ao aos à às
    """,
    "nl": """
        de het een en of maar van in op aan met voor door bij naar uit over onder tot om
        is zijn was waren wordt worden werd werden heeft hebben had hadden kan kunnen zal
        ik jij je hij zij ze wij we u hem haar ons hun mijn jouw zijn wie wat wanneer waar hoe
        waarom welke welk hoeveel dat dit deze die er niet geen ook nog al zo dan als
    """,
    "sv": """
        och i att det som en på är av för med till den har de inte om ett han men var jag sig
        från vi så kan man när år säger hon under också efter eller nu sin där vid mot ska skulle
        kommer ut får finns vara hade alla andra mycket än här då sedan över bara in blir upp
        vad vem vilken vilka varför hur
    """,
    "tr": """
        ve bir bu da de için ile ne mi mı mu mü gibi daha çok en ama ya veya ise o şu ben sen
        biz siz onlar kim neden nasıl nerede hangi kaç zaman değil var yok olan olarak sonra
        kadar göre her tüm
    """,
    "ro": """
        și în la de cu pe din pentru un o unei unui ce care cine când unde cum cât câți câte
        este sunt era au a fost fi avea nu mai sau dar ca că se să el ea ei ele noi voi eu tu
        acest această aceste acești al ale lui lor
    """,
}
#: Each language's function words (lower case).
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    language: frozenset(words.split()) for language, words in _LISTS.items()
}

# Scripts that name the language stemmed for them (first code point, last code point, language).
_STEMMED_SCRIPTS: tuple[tuple[int, int, str], ...] = (
    (0x0370, 0x03FF, "el"),
    (0x1F00, 0x1FFF, "el"),
    (0x0400, 0x052F, "ru"),
    (0x0530, 0x058F, "hy"),
    (0x0600, 0x06FF, "ar"),
    (0x0750, 0x077F, "ar"),
    (0x0900, 0x097F, "hi"),
    (0x0B80, 0x0BFF, "ta"),
)
#: The language of a word by its script, for scripts that name one.
SCRIPT_LANGUAGES = {language for _, _, language in _STEMMED_SCRIPTS}

# Function words of the languages decided by script, for their queries.
_SCRIPT_STOP_WORDS = {
    "ru": """
        и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только
        ее её мне было вот от меня еще ещё нет о об из ему когда даже ну ли если уже или ни быть
        был была были будет него до вас там потом себя ей может они тут где есть надо ней для мы
        тебя их чем сам без чего раз тоже себе под кто этот того потому этого какой какая какие
        каким каких какое каком какую который которая которые которого которой сколько почему
        зачем эти эту этой этом это при после над через про между
    """,
    "ar": """
        في من إلى الى على عن مع هذا هذه ذلك تلك التي الذي الذين هو هي هم هن أن إن ان كان كانت
        كانوا ما ماذا متى أين اين كيف لماذا كم أي اي هل لا لم لن قد ثم أو او بين بعد قبل عند
        حتى كل بعض غير و ف ب ل
    """,
    "hi": """
        का के की को में से पर और या है हैं था थे थी थीं हो होता होती होते ने भी तो ही एक यह वह ये वे
        इस उस इन उन कि जो क्या कौन कब कहाँ कहां कैसे क्यों कितना कितने कितनी किस किसने किसे
        लिए द्वारा साथ बाद तक नहीं
    """,
}
# More function words, dropped from queries only (they decide no language).
_QUERY_ONLY = {
    "de": """
        alle allem allen aller alles also ander andere anderen anderer anderes bin bis bist damit
        dass daß dein deine durch einig einige einigen einiger einmal etwas euer eure gewesen hab
        habe hier hin hinter indem ins jede jedem jeden jeder jedes jetzt kein keine keinem
        keinen keiner man manche mein meine meinem meinen meiner mich muss musste nichts nun
        ohne seinem seinen seiner selbst solche soll sollte sondern sonst uns unser unsere
        viel vor während weg weil weiter welchem welchen wieder will wirst wollen wollte würde
        würden zwar zwischen
    """,
}
_STOP_WORDS: dict[str, frozenset[str]] = {
    **{
        language: words | frozenset(_QUERY_ONLY.get(language, "").split())
        for language, words in FUNCTION_WORDS.items()
    },
    **{language: frozenset(words.split()) for language, words in _SCRIPT_STOP_WORDS.items()},
}

#: Another language than English needs this many function words to be decided.
MIN_VOTES = 2

_LATIN_WORD = re.compile(r"[^\W\d_]+")
# Each function word -> the languages whose list holds it (one lookup per word of a text).
_VOTERS: dict[str, tuple[str, ...]] = {}
for _language, _words in FUNCTION_WORDS.items():
    for _word in _words:
        _VOTERS[_word] = (*_VOTERS.get(_word, ()), _language)


def script_of(char: str) -> str | None:
    """The language a character's script names (``"ru"`` for Cyrillic, …), else ``None``."""
    code = ord(char)
    for first, last, language in _STEMMED_SCRIPTS:
        if first <= code <= last:
            return language
    return None


def latin_language(text: str, default: str = ENGLISH, min_votes: int = MIN_VOTES) -> str:
    """The language of *text*'s Latin words: the one whose function words it holds most often
    (at least *min_votes* of them: a query, short, passes 1); English on a tie with English;
    *default* when no function word decides."""
    votes: dict[str, int] = {ENGLISH: 0}
    for word in _LATIN_WORD.findall(text.lower()):
        voters = _VOTERS.get(word)
        if voters is not None:
            for language in voters:
                votes[language] = votes.get(language, 0) + 1
    if len(votes) == 1 and not votes[ENGLISH]:
        return default
    best = max(votes.values())
    if votes[ENGLISH] == best:
        return ENGLISH
    if best < min_votes:
        # One accidental function word ("em" in "Go get 'em!") decides nothing.
        return ENGLISH if votes[ENGLISH] else default
    return min(language for language, count in votes.items() if count == best)


def stop_words(language: str) -> frozenset[str]:
    """The function words dropped from a query in *language* (empty when zkr has none)."""
    return _STOP_WORDS.get(language, frozenset())
