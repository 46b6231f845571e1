"""Hand-written word lists for the benchmark corpus: the people, places, things and phrasing of a
personal agent's memory (conversation turns, preferences, tasks, errands, work notes).

Lists are ordered roughly from most to least common: the generator draws from them with Zipf-like
weights, so early entries recur often (like real speech) and late entries are rare. Nothing here
comes from a real data set.
"""

from __future__ import annotations


def _words(text: str) -> list[str]:
    return text.split()


FIRST_NAMES = _words(
    """
Sam Alex Maria Jordan Priya Tom Lena Omar Grace Daniel Mia Noah Aisha Lucas Emma Ravi Sofia Ben
Chloe Mateo Hana Jonas Nadia Felix Zoe Kenji Lila Marcus Ines Theo Yara Leo Nora Diego Amara Ethan
Freya Hugo Ivy Jamal Kira Liam Maya Nikhil Olga Pablo Quinn Rosa Sven Tara Umar Vera Wes Ximena
Yusuf Zara Anton Beatriz Cyrus Dalia Emil Farah Gideon Helga Idris Juno Kofi Luz Mads Nell Osman
Petra
Rafael Saoirse Tobias Ulla Viktor Wren Yosef Zainab Arjun Bianca Caspar Delphine Eero Fatima Gustav
Halima Ilya Joaquin Katya Lorenzo Mirela Nils Ottilie Paloma Rashid Selin Teodor
"""
)

SURNAMES = _words(
    """
Garcia Chen Okafor Schmidt Patel Novak Haddad Kim Rossi Silva Larsen Dubois Tanaka Moreau Kowalski
Andersen Ibrahim Costa Nguyen Fischer Mendes Ortiz Petrov Sato Hughes Lindqvist Barros Quinlan Varga
Eriksen Fontaine Gallagher Holloway Iyer Jaramillo Kaczmarek Lombardi Mbeki Nakamura Oyelaran
Pereira
Rahman Strand Toivonen Uribe Vasquez Whitfield Yilmaz Zeller
"""
)

RELATIONS = _words(
    """
sister brother mum dad partner boss colleague friend neighbour cousin aunt uncle manager doctor
dentist landlord teacher coach roommate grandmother grandfather niece nephew mentor accountant
"""
)

CITIES = _words(
    """
Lisbon Berlin London Paris Madrid Porto Vienna Prague Amsterdam Copenhagen Oslo Stockholm Helsinki
Dublin Edinburgh Barcelona Valencia Seville Milan Rome Naples Florence Munich Hamburg Zurich Geneva
Brussels Antwerp Rotterdam Krakow Warsaw Budapest Athens Istanbul Marrakesh Cairo Nairobi Lagos
Tokyo Kyoto Osaka Seoul Taipei Singapore Bangkok Hanoi Sydney Melbourne Auckland Toronto Montreal
Vancouver Boston Chicago Denver Seattle Austin Portland Oaxaca Lima Bogota Santiago Valparaiso
"""
)

VENUES = [
    "the office",
    "the gym",
    "the library",
    "the farmers market",
    "the train station",
    "the airport",
    "the coffee shop on the corner",
    "the bakery",
    "the pharmacy",
    "the park",
    "the community garden",
    "the climbing hall",
    "the swimming pool",
    "the co-working space",
    "the hardware store",
    "the bookshop",
    "the cinema",
    "the concert hall",
    "the museum",
    "the hospital",
    "the post office",
    "the town hall",
    "the bike shop",
    "the night market",
    "the ramen place",
    "the Thai restaurant",
    "the pizzeria downstairs",
    "the wine bar",
    "the vet",
    "the laundromat",
    "the dojo",
    "the yoga studio",
    "the school gate",
    "the football pitch",
    "the beach",
    "the lake",
    "the ferry terminal",
    "the car wash",
    "the garden centre",
    "the embassy",
]

FOODS = _words(
    """
pasta sushi ramen tacos curry salad pizza dumplings soup risotto paella falafel hummus burritos
pancakes porridge granola sourdough croissants noodles pho kimchi tofu tempeh halloumi lentils
chickpeas gnocchi lasagne moussaka shakshuka biryani dal tagine couscous ceviche empanadas arepas
pierogi goulash schnitzel bratwurst fondue raclette crepes quiche tapas gazpacho tortilla bao
dim-sum udon soba okonomiyaki bibimbap laksa satay rendang injera jollof
"""
)

DRINKS = [
    "oat milk lattes",
    "black coffee",
    "green tea",
    "sparkling water",
    "flat whites",
    "chai",
    "mint tea",
    "espresso",
    "orange juice",
    "kombucha",
    "red wine",
    "craft beer",
    "hot chocolate",
    "matcha",
    "decaf",
    "rooibos",
    "lemonade",
    "cold brew",
]

ACTIVITIES = _words(
    """
running cycling swimming climbing yoga hiking reading painting cooking baking gardening chess
knitting photography sailing surfing skiing dancing singing drumming pottery woodworking rowing
tennis badminton football basketball volleyball bouldering meditation journaling birdwatching
kayaking fishing camping sketching calligraphy origami juggling archery fencing skating boxing
"""
)

INSTRUMENTS = _words(
    """
piano guitar cello violin ukulele drums flute saxophone trumpet harmonica accordion banjo
"""
)

LANGUAGES = _words(
    """
Portuguese Spanish German French Italian Japanese Korean Mandarin Arabic Dutch Swedish Polish
Turkish Greek Hindi Swahili Finnish Norwegian Czech Hungarian
"""
)

ORGS = [
    "Acme",
    "Globex",
    "Initech",
    "Umbrella Labs",
    "Northwind",
    "Contoso",
    "Fabrikam",
    "Blue Harbor",
    "Tidewater Health",
    "Kestrel Analytics",
    "Brightline Studio",
    "Oakridge School",
    "Riverbend Clinic",
    "Copperleaf Bank",
    "Lumen Robotics",
    "Stonegate Legal",
    "Greenfield Foods",
    "Harbor & Vine",
    "Polar Logistics",
    "Meridian Press",
    "Ironwood Games",
    "Solstice Energy",
    "Pinecrest Insurance",
    "Atlas Mobility",
    "Foxglove Design",
    "Quarry Hill Capital",
    "Sundial Software",
    "Redwood Architects",
    "Cobalt Systems",
    "Willow Care",
]

JOB_TITLES = _words(
    """
engineer designer nurse teacher accountant lawyer researcher architect chef pharmacist translator
journalist photographer electrician carpenter librarian consultant analyst manager recruiter
"""
)

PROJECTS = [
    "the quarterly report",
    "the website redesign",
    "the data migration",
    "the budget review",
    "the hiring plan",
    "the onboarding guide",
    "the product launch",
    "the customer survey",
    "the security audit",
    "the mobile app",
    "the grant application",
    "the conference talk",
    "the annual review",
    "the kitchen renovation",
    "the wedding planning",
    "the garden project",
    "the tax return",
    "the move to the new flat",
    "the research paper",
    "the sales pitch",
    "the podcast episode",
    "the newsletter",
    "the board meeting slides",
    "the API rollout",
    "the vendor contract",
    "the training course",
    "the photo book",
    "the charity run",
    "the school fundraiser",
    "the holiday itinerary",
]

OBJECTS = _words(
    """
keys passport laptop charger umbrella wallet headphones glasses notebook bike helmet jacket scarf
backpack phone tablet camera water-bottle lunchbox raincoat boots gloves badge ticket receipt
invoice prescription parcel library-card thermos yoga-mat tent sleeping-bag suitcase toolbox
"""
)

ADJECTIVES = _words(
    """
quiet busy lovely awful cheap expensive tiny huge cosy noisy calm bright dark warm cold crowded
peaceful messy tidy slow quick friendly grumpy lucky odd fancy simple spicy sweet bitter fresh
stale gentle rough clever boring exciting strange familiar rainy sunny windy foggy early late
"""
)

FEELINGS = _words(
    """
tired happy stressed relieved excited anxious calm grateful annoyed curious bored hopeful
overwhelmed proud nervous content frustrated energetic sleepy confident
"""
)

WEEKDAYS = _words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")

MONTHS = _words(
    """
January February March April May June July August September October November December
"""
)

TIMES_OF_DAY = [
    "this morning",
    "tonight",
    "after lunch",
    "before work",
    "at noon",
    "around six",
    "first thing tomorrow",
    "later today",
    "this weekend",
    "next week",
    "on the way home",
    "after the school run",
]

APPS = [
    "the calendar",
    "the notes app",
    "email",
    "the team chat",
    "the banking app",
    "the fitness tracker",
    "the shared drive",
    "the recipe app",
    "the map",
    "the password manager",
    "the budget spreadsheet",
    "the photo library",
]

BOOK_WORDS_A = _words(
    """
Quiet Silver Hidden Last Broken Golden Distant Northern Paper Glass Winter Summer Burning Little
Long Secret Wild Empty Velvet Hollow
"""
)

BOOK_WORDS_B = _words(
    """
Rivers Orchard Harbour Lantern Kingdom Garden Mountains Letters Island Station Tides Machine
Forest Archive Season Compass Bridge Atlas Echo Meridian
"""
)

HEALTH = [
    "a sore back",
    "a cold",
    "hay fever",
    "a headache",
    "a sprained ankle",
    "trouble sleeping",
    "a check-up",
    "the flu jab",
    "a blood test",
    "an eye test",
    "physio",
    "a dental cleaning",
]

ALLERGIES = _words(
    """
peanuts shellfish gluten lactose pollen cats penicillin sesame strawberries dust
"""
)

PETS = ["dog", "cat", "rabbit", "parrot", "tortoise", "hamster"]

PET_NAMES = _words(
    """
Biscuit Pepper Mochi Luna Ziggy Olive Waffles Pickles Nori Cosmo Maple Tofu Bean Juniper Pixel
"""
)

# Filler of spoken turns: function words make "the"-heavy queries realistically expensive.
FILLERS = [
    "to be honest",
    "I think",
    "you know",
    "anyway",
    "by the way",
    "so",
    "actually",
    "oh and",
    "just so you know",
    "for the record",
    "honestly",
    "I guess",
    "remind me that",
    "note that",
    "as I said",
]

CLOSERS = [
    "Can you remember that?",
    "Please keep that in mind.",
    "Let me know if that changes anything.",
    "That is all for now.",
    "Thanks for tracking this.",
    "We can talk about it later.",
    "I will tell you how it goes.",
    "Not sure what to make of it.",
    "It was a long day.",
    "More on that tomorrow.",
]

# Syllables of made-up names (shops, products, streets, villages): the long tail of rare tokens.
SYLLABLES = _words(
    """
ka lo mi ren tu vash el dor ny qua zef bri tal os um sen gal rik pha tor lin mae vo sar bel thu ix
cor dan fen gri ho jas kel mor nev ost pel rov sul tev ul var wyn yor zan
"""
)
