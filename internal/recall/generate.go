package recall

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Generate makes a conversational corpus, the same for the same seed:
// n conversations between two people each, in which one person tells
// facts (a pet, a trip, a purchase, ...) over three turns, a mention, the
// other's reaction and the details (a date, a number, a name), among
// small talk; and questions about each fact, whose evidence is every turn
// that answers them, in whichever conversation (people and facts recur). The
// questions are phrased as people ask them ("When did Ana adopt the
// dog?"), name dates and numbers, and some are answered by a turn that
// shares few of their words, whose neighbours hold the rest: what ranking
// a turn with its conversation finds.
func Generate(seed uint64, n int) Conversations {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var cs Conversations
	// A question is answered by every turn that says what it asks, in
	// whichever conversation: people and facts recur across them, and
	// "Who is going to Iceland?" has as many right answers as there are
	// turns of someone flying there. So the turns and the questions are
	// keyed by what they say (answerKey), and each question's evidence is
	// every turn of its key.
	turns := map[string][]Evidence{}
	var keys []string // of cs.Questions
	for c := range n {
		a, b := people[(2*c)%len(people)], people[(2*c+1)%len(people)]
		conv := Conversation{ID: fmt.Sprintf("c%02d", c+1)}
		say := func(who, text string) int {
			conv.Turns = append(conv.Turns, Turn{Speaker: who, Date: fmt.Sprintf("2024-%02d-%02d", 1+c%12, 1+len(conv.Turns)%28), Text: text})
			return len(conv.Turns)
		}
		for _, i := range rng.Perm(len(facts))[:6] {
			f := facts[i]
			for range 1 + rng.IntN(3) {
				say([2]string{a, b}[rng.IntN(2)], smallTalk[rng.IntN(len(smallTalk))])
			}
			detail := f.details[rng.IntN(len(f.details))]
			day := fmt.Sprintf("%d %s", 1+rng.IntN(28), months[rng.IntN(len(months))])
			num := fmt.Sprint(2 + rng.IntN(97))
			fill := strings.NewReplacer("{name}", detail, "{day}", day, "{num}", num)
			mention := say(a, fill.Replace(f.mention))
			say(b, fill.Replace(f.reaction))
			answer := say(a, fill.Replace(f.answer))
			ask := strings.NewReplacer("{who}", a, "{name}", detail, "{day}", day, "{num}", num)
			values := map[string]string{"{who}": a, "{name}": detail, "{day}": day, "{num}": num}
			for _, q := range []struct {
				template string
				turn     int
			}{{f.about, mention}, {f.detail, answer}, {f.byValue, answer}} {
				k := answerKey(i, q.turn == mention, q.template, values)
				turns[k] = append(turns[k], Evidence{Conversation: conv.ID, Turn: q.turn})
				cs.Questions = append(cs.Questions, Question{Question: ask.Replace(q.template)})
				keys = append(keys, k)
			}
		}
		cs.Conversations = append(cs.Conversations, conv)
	}
	for i, k := range keys {
		cs.Questions[i].Evidence = slices.Clone(turns[k])
	}
	return cs
}

// answerKey names what a question of fact i asks, written from template
// with values: the fact, the turn that answers it (the mention or the
// answer), and the values the question names. The turns that answer the
// question are those of the same key.
func answerKey(fact int, mention bool, template string, values map[string]string) string {
	k := fmt.Sprintf("%d %v", fact, mention)
	for _, p := range []string{"{who}", "{name}", "{day}", "{num}"} {
		if strings.Contains(template, p) {
			k += " " + p + "=" + values[p]
		}
	}
	return k
}

var people = []string{"Ana", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Luca", "Mira", "Noah", "Olga", "Pablo"}

var months = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

// A fact is told in three turns: mention, reaction, answer. Its
// questions ask what it is about (answered by the mention), a detail of
// it (answered by the answer turn, which shares few words with the
// question: its neighbours hold them), and by the detail's value (a
// date, a number or a name).
var facts = []struct {
	details                   []string
	mention, reaction, answer string
	about, detail, byValue    string
}{
	{
		[]string{"Biscuit", "Pepper", "Mochi", "Ziggy"},
		"We finally adopted a rescue dog from the shelter!",
		"A dog! That is wonderful news, what breed is the rescue?",
		"A beagle mix called {name}, we brought him home on {day}.",
		"Did {who} adopt a dog?", "What is the name of {who}'s rescue dog?", "Who is {name}?",
	},
	{
		[]string{"Lisbon", "Kyoto", "Oslo", "Valparaiso"},
		"I am training for my first marathon this year.",
		"A marathon is serious. How much are you running each week?",
		"About {num} km a week now; the race is in {name} on {day}.",
		"Which race is {who} training for?", "How many km a week is {who} running for the marathon?", "What happens in {name} on {day}?",
	},
	{
		[]string{"Fiat", "Volvo", "Skoda", "Mazda"},
		"My old car broke down again on the motorway.",
		"Not again! Are you going to fix it or buy another car?",
		"I bought a used {name} for {num} hundred euros on {day}.",
		"What happened to {who}'s car?", "What did {who} buy after the car broke down?", "Who bought a {name}?",
	},
	{
		[]string{"pottery", "salsa", "watercolour", "climbing"},
		"I signed up for an evening class at the community centre.",
		"Oh nice, what kind of class did you pick?",
		"{name}, every Tuesday, and the first session was on {day}.",
		"Is {who} taking a class?", "Which evening class did {who} sign up for at the community centre?", "Who is learning {name}?",
	},
	{
		[]string{"Porto", "Krakow", "Hanoi", "Quito"},
		"We are moving flats, the lease ends soon.",
		"Moving is exhausting. Where is the new place?",
		"Near the river in {name}, we get the keys on {day}.",
		"Why is {who} moving?", "Where is {who}'s new flat?", "Who is moving to {name}?",
	},
	{
		[]string{"nurse", "architect", "chef", "librarian"},
		"I got the job offer I interviewed for last month!",
		"Congratulations on the offer! What is the role?",
		"Senior {name}, starting {day}, with {num} days of holiday.",
		"Did {who} get a job offer?", "What role did {who} get offered?", "Who is the new senior {name}?",
	},
	{
		[]string{"Luna", "Oskar", "Ivy", "Theo"},
		"My sister had her baby yesterday.",
		"A baby! Boy or girl, and how is your sister?",
		"They named the little one {name}, born {day} at {num} minutes past six.",
		"Who had a baby in {who}'s family?", "What is the name of {who}'s sister's baby?", "Who was born on {day}?",
	},
	{
		[]string{"violin", "cello", "piano", "drums"},
		"I started music lessons again after years.",
		"Music lessons, lovely. Which instrument do you play?",
		"The {name}; I practise {num} minutes a day since {day}.",
		"Is {who} taking music lessons?", "Which instrument does {who} play in the lessons?", "Who practises the {name}?",
	},
	{
		[]string{"tomatoes", "courgettes", "strawberries", "pumpkins"},
		"The allotment garden is finally producing something.",
		"Your garden! What did you harvest?",
		"Mostly {name}, {num} kilos of them since {day}.",
		"How is {who}'s allotment garden doing?", "What did {who} harvest from the allotment?", "Who grew {num} kilos of {name}?",
	},
	{
		[]string{"Iceland", "Morocco", "Peru", "Japan"},
		"We booked our summer holiday flights today.",
		"Holiday plans! Where are you flying?",
		"To {name} for {num} days, leaving on {day}.",
		"Did {who} book a holiday?", "Where is {who} flying for the summer holiday?", "Who is going to {name}?",
	},
}

var smallTalk = []string{
	"How was your weekend?",
	"Pretty quiet, mostly reading and cleaning the flat.",
	"The weather has been awful all week.",
	"Did you watch the match last night?",
	"I have been so tired lately, work is busy.",
	"Haha, that sounds like me.",
	"We should get coffee soon.",
	"Sure, next week works for me.",
	"Sorry, I was in a meeting all afternoon.",
	"That reminds me, I need to call my mum.",
	"Anyway, how are things with you?",
	"Not bad, just the usual.",
}
