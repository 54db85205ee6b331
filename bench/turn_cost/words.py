"""Word lists for the turn-cost history: a few thousand English words by kind, plus
made-up proper nouns (people, pets, streets, shops) for the rare-term tail of a real chat log.
Deterministic: nothing here is random; the generator draws from these with a seeded RNG."""

NOUNS = """
account accident address adventure advice afternoon agreement airport alarm album allergy
anniversary answer apartment appetite appointment apron argument arm article assignment
attic audience aunt autumn avocado baby backpack bacon bag bakery balcony ball banana band bank
barbecue basement basket bath bathroom battery beach bean bear beard bed bedroom bee beer bell
belt bench berry bicycle bill bin biscuit birthday blanket blender blister blouse board boat
body boiler bone book bookshelf boot bottle bowl box boyfriend bracelet brain branch bread
breakfast brick bridge brother brunch brush bucket budget bug building bulb bus butter button
cabin cable cafe cake calendar camera camp campsite candle canoe cap car caravan card cardigan
carpet carrot cart castle cat ceiling cellar chair championship chapter charger cheese chef
cherry chess chicken child chimney chocolate choir church cinema circle city class classroom
client cliff clinic clock closet cloud club coach coast coat coffee coin collar colleague
college comedy computer concert contract cook cookie corner cottage couch cough counter
country course cousin cow crab cream credit cricket crowd cruise cucumber cup cupboard curry
curtain cushion customer cycle dad daughter deadline deck delivery dentist desk dessert diary
dinner dish dishwasher doctor document dog doll door drawer dream dress drill drink driver
drum duck dust duvet ear earring egg election elevator email engine essay evening exam
exhibition eye fabric factory family farm fence ferry festival fever field film fish flat
flight floor flour flower flute fog football forest fork fountain fridge friend frog fruit
funeral furniture game garage garden garlic gate gift ginger girlfriend glass glove goal
goat gold golf grandma grandpa grape grass gravy guitar gym habit hair haircut hall ham
hammer hand harbour hat headache heater hedge helmet hill hobby holiday homework honey
hospital hostel hotel hour house husband ice idea illness ink insurance interview invoice
island jacket jam jar jeans job journal journey juice kayak kettle key keyboard kid kitchen
kite knee knife ladder lake lamp landlord laptop laundry lawn lawyer lecture lemon lesson
letter library licence lift light lunch magazine mail manager map market marathon mattress
meal meeting melon menu message microwave milk mirror mistake mobile money month morning
mortgage mountain mouse movie mug museum mushroom music nail neighbour nephew nest newspaper
niece night noodle notebook novel nurse nut oat office onion orange orchestra oven owner
package page paint painting pan pancake paper parcel parent park party passport pasta path
patient pear pen pencil pepper phone photo piano picnic pie pillow pilot pizza plan plane
plant plate platform play playground plumber pocket podcast poem pond pool postcard pot
potato present printer project pub pudding pumpkin puppy puzzle quiz rabbit race radio rain
receipt recipe record referee rent report restaurant rice ring river road roof room rose
rug ruler sack salad salary salmon sandwich sauce sausage scarf school scissors screen sea
season seat secret shampoo shed shelf shirt shoe shop shower sink sister skirt sky sleep
slipper snack snow soap sock sofa soup spider spinach spoon stadium staircase stamp station
steak stew stomach storm story stove strawberry street student studio subway sugar suitcase
summer sun supermarket surgery sweater swimsuit table tablet tea teacher team tent term
test theatre ticket tie tile toast toaster toilet tomato tooth toothbrush torch tour towel
tower town toy track tractor traffic train trainer tram tree trip trophy truck trumpet
tunnel turkey tutor umbrella uncle university vacation van vase vegetable vet village
violin visa visit voice wall wallet wardrobe washing watch water wedding week weekend
wheel whistle wife window wine winter wood workshop yard yoga yogurt zoo
""".split()

ADJECTIVES = """
able angry annoying anxious awful awkward bad basic beautiful big bitter bland bored boring
brave bright brilliant broken brown busy calm careful cheap cheerful chilly clean clever
cold colourful comfortable common cosy crazy creamy crowded cute damp dangerous dark dear
decent delicious different difficult dirty dusty early easy elegant empty enormous exciting
expensive fair familiar famous fancy fantastic fast fine flat fresh friendly frozen full
funny fuzzy generous gentle gloomy glorious good gorgeous great green grumpy handy happy
hard healthy heavy helpful hilarious honest hot huge humid hungry icy important impressive
interesting itchy jolly kind large late lazy light little lively local lonely long loud
lovely lucky massive messy mild modern muddy narrow nasty neat nervous new nice noisy odd
old orange painful pale peaceful perfect pink plain pleasant polite poor popular pretty
proud purple quick quiet rainy rare ready red relaxed relaxing reliable rich rough round
rude rusty sad safe salty scary shiny short shy silly simple slow small smart smooth soft
sore sour spicy spotless steep sticky stormy strange strict strong stuffy sunny super
sweet tall tasty terrible thick thin tidy tiny tired tough tricky ugly unusual upset
useful warm weird wet white wide wild windy wise wonderful wooden worried yellow young
""".split()

VERBS = """
ask bake book borrow bring build buy call carry change check choose clean climb collect
cook cut dance decide deliver design drive drop explain find finish fix fold follow forget
grow hang hide hire join keep kick knit learn leave lend lift listen mend miss move order
organise pack paint pay pick plan plant play post practise prepare print read remember
rent repair return ride sell send sew share sing sketch sort start stop study swim take
teach test tidy train travel try visit walk wash watch water wrap write
""".split()

VERB_PAST = {
    "ask": "asked", "bake": "baked", "book": "booked", "borrow": "borrowed", "bring": "brought",
    "build": "built", "buy": "bought", "call": "called", "carry": "carried", "change": "changed",
    "check": "checked", "choose": "chose", "clean": "cleaned", "climb": "climbed",
    "collect": "collected", "cook": "cooked", "cut": "cut", "dance": "danced",
    "decide": "decided", "deliver": "delivered", "design": "designed", "drive": "drove",
    "drop": "dropped", "explain": "explained", "find": "found", "finish": "finished",
    "fix": "fixed", "fold": "folded", "follow": "followed", "forget": "forgot", "grow": "grew",
    "hang": "hung", "hide": "hid", "hire": "hired", "join": "joined", "keep": "kept",
    "kick": "kicked", "knit": "knitted", "learn": "learned", "leave": "left", "lend": "lent",
    "lift": "lifted", "listen": "listened", "mend": "mended", "miss": "missed", "move": "moved",
    "order": "ordered", "organise": "organised", "pack": "packed", "paint": "painted",
    "pay": "paid", "pick": "picked", "plan": "planned", "plant": "planted", "play": "played",
    "post": "posted", "practise": "practised", "prepare": "prepared", "print": "printed",
    "read": "read", "remember": "remembered", "rent": "rented", "repair": "repaired",
    "return": "returned", "ride": "rode", "sell": "sold", "send": "sent", "sew": "sewed",
    "share": "shared", "sing": "sang", "sketch": "sketched", "sort": "sorted",
    "start": "started", "stop": "stopped", "study": "studied", "swim": "swam", "take": "took",
    "teach": "taught", "test": "tested", "tidy": "tidied", "train": "trained",
    "travel": "travelled", "try": "tried", "visit": "visited", "walk": "walked",
    "wash": "washed", "watch": "watched", "water": "watered", "wrap": "wrapped",
    "write": "wrote",
}

ADVERBS = """
actually again almost already always apparently barely basically certainly clearly
constantly definitely easily eventually exactly finally frankly generally gradually
honestly hopefully immediately luckily mainly maybe mostly nearly normally obviously
occasionally often perhaps possibly probably quickly quietly rarely really recently
seriously simply slowly sometimes soon still suddenly surely totally truly usually
""".split()

ACTIVITIES = """
archery baking birdwatching bouldering bowling calligraphy camping canoeing ceramics chess
climbing crochet cycling dancing diving drawing embroidery fencing fishing gardening golf
hiking jogging journaling judo karate kayaking knitting origami painting photography
pilates pottery quilting reading rowing running sailing sculpting sewing singing skating
skiing snorkelling surfing swimming tennis volunteering woodworking yoga
""".split()

FOODS = """
lasagne risotto paella sushi ramen curry tacos burritos dumplings falafel hummus kebab
moussaka goulash pho biryani quiche omelette porridge granola muesli croissants bagels
brownies cheesecake tiramisu scones crumpets pancakes waffles smoothies lentils chickpeas
tofu tempeh quinoa couscous polenta gnocchi ravioli spaghetti meatballs chowder gazpacho
coleslaw guacamole salsa pesto kimchi sauerkraut pretzels nachos popcorn muffins flapjacks
""".split()

CITIES = """
Lisbon Porto Madrid Seville Barcelona Valencia Paris Lyon Marseille Nice Bordeaux Berlin
Munich Hamburg Cologne Vienna Salzburg Zurich Geneva Milan Rome Naples Florence Venice
Turin Athens Prague Krakow Warsaw Budapest Copenhagen Stockholm Oslo Helsinki Dublin Cork
Edinburgh Glasgow Manchester Leeds Bristol Cardiff Brighton York Oxford Cambridge London
Amsterdam Utrecht Antwerp Brussels Ghent Tallinn Riga Vilnius Split Dubrovnik Ljubljana
Toronto Montreal Vancouver Boston Chicago Denver Seattle Portland Austin Nashville Tokyo
Osaka Kyoto Seoul Taipei Singapore Sydney Melbourne Auckland Wellington Nairobi Cairo
Marrakesh Istanbul Reykjavik Bergen Malmo Aarhus Bologna Verona Granada Malaga
""".split()

FIRST_NAMES = """
Aaron Abby Adam Aisha Alex Alice Amir Amy Ana Andrew Anna Ben Beth Bilal Bruno Carla
Carlos Chloe Chris Clara Dan Daniel Dara Dave Diana Eddie Elena Eli Ella Emma Eric Eva
Fatima Felix Fiona Frank Gabe Grace Hana Harry Helen Hugo Ian Ines Isla Ivan Jack Jade
Jamal James Jane Jasmine Jay Jess Joe John Jonas Julia Kai Karen Kate Kenji Kim Lara Leo
Liam Lily Lina Luca Lucy Luis Maya Mia Mike Mina Nadia Nate Nina Noah Nora Olga Omar Oscar
Paul Priya Raj Rita Rosa Ruby Ryan Sam Sara Sean Sofia Tara Theo Tom Uma Vera Victor Will
Yara Yusuf Zara Zoe
""".split()

RELATIONS = """
sister brother mum dad cousin aunt uncle grandma grandpa niece nephew neighbour colleague
boss friend flatmate partner son daughter wife husband
""".split()

DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = ("January February March April May June July August September October "
          "November December").split()

SYLLABLES = """
ba be bi bo bu ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu ra re ri ro ru
sa se si so su ta te ti to tu va ve vi vo za ze zi zo dar del dor fen fin gal gor har hel
kel kin lan lor mar mel mor nel nor pal pen quin ral ren ros sal sel tam ten tor val ven
wil win bran cor dell fair ham ley mont ridge ston ton wick worth
""".split()


def made_up_names(count, rng):
    """`count` distinct capitalised made-up names (two or three syllables)."""
    seen = set()
    out = []
    while len(out) < count:
        n = rng.choice((2, 2, 3))
        word = "".join(rng.choice(SYLLABLES) for _ in range(n)).capitalize()
        if word not in seen and len(word) >= 4:
            seen.add(word)
            out.append(word)
    return out
