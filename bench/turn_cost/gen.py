"""Deterministic chat history for the turn-cost bench.

history(n, seed): n messages of one user, user and assistant alternating, dated over months
(12 months, whatever n), varied English built from templates over ~1,250 dictionary words
and ~2,500 made-up proper nouns drawn with Zipf-like weights (a few words are common, most
rare), so the keyword index has a realistic long tail. About one user message in twelve
states something about the user (likes, job, home, pets, allergies) so the rule extractor
finds facts as it would in a real log.

turns(count, seed): the messages typed into `agentmem chat`, the same kind of text, half of
them questions about the past.
"""
import json
import random
from datetime import datetime, timedelta, timezone

import words as W


class Vocab:
    def __init__(self, rng):
        made = W.made_up_names(2600, rng)
        self.people = W.FIRST_NAMES + made[:600]
        self.pets = made[600:900]
        self.streets = [m + " " + rng.choice(("Street", "Road", "Lane", "Avenue", "Close"))
                        for m in made[900:1300]]
        self.shops = made[1300:1800]
        self.products = made[1800:2300]
        self.teams = made[2300:2600]
        self._cum = {}

    def pick(self, rng, name, items, s=1.0):
        """A Zipf-like draw: item i has weight 1/(i+1)^s (the order is fixed per list)."""
        cum = self._cum.get(name)
        if cum is None:
            total, cum = 0.0, []
            for i in range(len(items)):
                total += 1.0 / (i + 1) ** s
                cum.append(total)
            self._cum[name] = cum
        return rng.choices(items, cum_weights=cum)[0]


def shuffled(rng, items):
    items = list(items)
    rng.shuffle(items)
    return items


class Speaker:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        r = self.rng
        self.v = Vocab(r)
        # a fixed random rank per list, so which words are common differs from list order
        self.nouns = shuffled(r, W.NOUNS)
        self.adjs = shuffled(r, W.ADJECTIVES)
        self.verbs = shuffled(r, W.VERBS)
        self.advs = shuffled(r, W.ADVERBS)
        self.acts = shuffled(r, W.ACTIVITIES)
        self.foods = shuffled(r, W.FOODS)
        self.cities = shuffled(r, W.CITIES)
        self.people = shuffled(r, self.v.people)

    # draws
    def n(self): return self.v.pick(self.rng, "n", self.nouns, 0.8)
    def a(self): return self.v.pick(self.rng, "a", self.adjs, 0.8)
    def vb(self): return self.v.pick(self.rng, "v", self.verbs, 0.9)
    def vp(self): return W.VERB_PAST[self.vb()]
    def adv(self): return self.v.pick(self.rng, "adv", self.advs, 0.9)
    def act(self): return self.v.pick(self.rng, "act", self.acts, 0.9)
    def food(self): return self.v.pick(self.rng, "food", self.foods, 0.9)
    def city(self): return self.v.pick(self.rng, "city", self.cities, 1.0)
    def who(self): return self.v.pick(self.rng, "who", self.people, 1.0)
    def pet(self): return self.v.pick(self.rng, "pet", self.v.pets, 1.0)
    def street(self): return self.v.pick(self.rng, "street", self.v.streets, 1.0)
    def shop(self): return self.v.pick(self.rng, "shop", self.v.shops, 1.0)
    def product(self): return self.v.pick(self.rng, "product", self.v.products, 1.0)
    def team(self): return self.v.pick(self.rng, "team", self.v.teams, 1.0)
    def rel(self): return self.rng.choice(W.RELATIONS)
    def day(self): return self.rng.choice(W.DAYS)
    def month(self): return self.rng.choice(W.MONTHS)
    def num(self): return str(self.rng.choice((2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 30, 45)))

    def user_sentence(self):
        r = self.rng
        t = r.randrange(24)
        if t == 0: return f"I went to the {self.n()} in {self.city()} with {self.who()} on {self.day()} and we {self.vp()} a {self.a()} {self.n()}."
        if t == 1: return f"My {self.rel()} {self.who()} {self.adv()} {self.vp()} the {self.n()} again, it was so {self.a()}."
        if t == 2: return f"Can you remind me to {self.vb()} the {self.n()} before {self.day()}?"
        if t == 3: return f"I've been thinking about {self.act()} because the {self.n()} at work has been {self.a()} lately."
        if t == 4: return f"We had {self.food()} at {self.shop()} on {self.street()} and it was {self.a()}."
        if t == 5: return f"{self.who()} said the {self.a()} {self.n()} from {self.shop()} costs {self.num()} pounds, is that {self.a()}?"
        if t == 6: return f"The {self.n()} broke {self.adv()} so I need to {self.vb()} a new {self.n()} this {self.day()}."
        if t == 7: return f"I finally {self.vp()} the {self.product()} {self.n()}, it took {self.num()} hours."
        if t == 8: return f"{self.pet()} knocked the {self.n()} off the {self.n()} this {r.choice(('morning', 'evening', 'afternoon'))}."
        if t == 9: return f"Our {self.n()} meeting moved to {self.day()} at {r.randint(7, 18)} o'clock, {self.adv()} annoying."
        if t == 10: return f"Do you think {self.act()} or {self.act()} would be better for a {self.a()} {self.n()} like me?"
        if t == 11: return f"The {self.team()} game was {self.a()}, {self.who()} and I {self.vp()} the whole {self.n()}."
        if t == 12: return f"Thinking of a trip to {self.city()} in {self.month()}, maybe for {self.num()} days."
        if t == 13: return f"I {self.adv()} {self.vp()} my {self.n()} and now the {self.n()} smells {self.a()}."
        if t == 14: return f"What should I {self.vb()} for {self.who()}'s {r.choice(('birthday', 'wedding', 'leaving party', 'anniversary'))}?"
        if t == 15: return f"lol the {self.n()} at {self.shop()} was {self.a()} and {self.a()} today"
        if t == 16: return f"I'm {self.adv()} tired, the {self.n()} kept me up until {r.randint(1, 4)} am."
        if t == 17: return f"My {self.rel()} wants to {self.vb()} the {self.a()} {self.n()} on {self.street()}."
        if t == 18: return f"Remember the {self.food()} recipe {self.who()} gave me? I {self.vp()} it with {self.food()}."
        if t == 19: return f"The {self.n()} in the {self.n()} is {self.a()} again, I have to {self.vb()} it."
        if t == 20: return f"Is it {self.a()} to {self.vb()} a {self.n()} in {self.month()}?"
        if t == 21: return f"ok thanks, I'll {self.vb()} the {self.n()} and {self.vb()} the {self.n()} later"
        if t == 22: return f"{self.who()} and {self.who()} are coming over for {self.food()} on {self.day()}."
        return f"Spent the {self.day()} {self.act()} near {self.city()}, {self.adv()} {self.a()}."

    def user_fact(self):
        r = self.rng
        t = r.randrange(10)
        if t == 0: return f"I really love {self.act()}."
        if t == 1: return f"I work as a {r.choice(('teacher', 'nurse', 'designer', 'plumber', 'chef', 'lawyer', 'engineer', 'librarian', 'pilot', 'dentist'))} now."
        if t == 2: return f"I live in {self.city()} these days."
        if t == 3: return f"My dog is called {self.pet()}."
        if t == 4: return f"I'm allergic to {r.choice(('peanuts', 'shellfish', 'cats', 'pollen', 'penicillin', 'eggs', 'kiwi', 'sesame'))}."
        if t == 5: return f"I don't eat {r.choice(('meat', 'pork', 'dairy', 'gluten', 'fish', 'sugar'))}."
        if t == 6: return f"My favourite food is {self.food()}."
        if t == 7: return f"My {self.rel()}'s name is {self.who()}."
        if t == 8: return f"I hate {self.act()}."
        return f"I started {self.act()} classes on {self.day()}s."

    def user_message(self):
        r = self.rng
        if r.random() < 1 / 12:
            return self.user_fact()
        parts = [self.user_sentence()]
        if r.random() < 0.35:
            parts.append(self.user_sentence())
        return " ".join(parts)

    def assistant_message(self):
        r = self.rng
        t = r.randrange(12)
        if t == 0: s = f"That sounds {self.a()}! Did {self.who()} enjoy the {self.n()}?"
        elif t == 1: s = f"You could {self.vb()} the {self.n()} first, then {self.vb()} the {self.n()} on {self.day()}."
        elif t == 2: s = f"I'd suggest {self.act()}: it is {self.a()} and you only need a {self.n()}."
        elif t == 3: s = f"Noted. I'll remind you to {self.vb()} the {self.n()} before {self.day()}."
        elif t == 4: s = f"{self.city()} is {self.a()} in {self.month()}; book the {self.n()} early."
        elif t == 5: s = f"For a {self.a()} {self.n()}, try {self.food()} with a {self.a()} {self.n()}."
        elif t == 6: s = f"Sorry to hear about the {self.n()}. Maybe {self.who()} can help you {self.vb()} it?"
        elif t == 7: s = f"A {self.a()} {self.n()} from {self.shop()} would make a {self.a()} present."
        elif t == 8: s = f"Good idea. {self.act().capitalize()} is {self.adv()} {self.a()} for beginners."
        elif t == 9: s = f"If the {self.n()} is {self.a()}, {self.vb()} it {self.adv()} and let it dry."
        elif t == 10: s = f"Sure. Here is a plan: {self.vb()} the {self.n()}, {self.vb()} the {self.n()}, then rest."
        else: s = f"Happy to help! How did the {self.n()} on {self.street()} go?"
        if r.random() < 0.3:
            s += f" Also, {self.adv()} {self.vb()} the {self.n()} when you can."
        return s

    def question(self):
        r = self.rng
        t = r.randrange(8)
        if t == 0: return f"What did I say about the {self.n()} last {self.month()}?"
        if t == 1: return f"Where did {self.who()} and I have {self.food()}?"
        if t == 2: return f"When is my trip to {self.city()} again?"
        if t == 3: return f"Which {self.n()} did I buy from {self.shop()}?"
        if t == 4: return f"What am I allergic to, and can I have {self.food()} tonight?"
        if t == 5: return f"Did I ever finish the {self.product()} {self.n()}?"
        if t == 6: return f"What is my dog called, and is {self.act()} ok for him?"
        return f"Remind me what {self.who()} said about the {self.n()}."


def history(n, seed=37):
    sp = Speaker(seed)
    r = sp.rng
    start = datetime(2025, 1, 6, 8, 0, tzinfo=timezone.utc)
    span = timedelta(days=365).total_seconds()
    step = span / max(n, 1)
    t = 0.0
    out = []
    for i in range(n):
        t += step * (0.5 + r.random())  # jitter, monotonic, ~12 months in all
        at = start + timedelta(seconds=min(t, span))
        role = "user" if i % 2 == 0 else "assistant"
        content = sp.user_message() if role == "user" else sp.assistant_message()
        out.append({"role": role, "content": content,
                    "created_at": at.strftime("%Y-%m-%dT%H:%M:%SZ")})
    return out


def turns(count, seed=3737):
    sp = Speaker(seed)
    out = []
    for i in range(count):
        out.append(sp.question() if i % 2 == 0 else sp.user_message())
    return out


if __name__ == "__main__":
    import sys
    kind, n = sys.argv[1], int(sys.argv[2])
    if kind == "history":
        for m in history(n):
            print(json.dumps(m))
    else:
        for line in turns(n):
            print(line)
