package bm25

// Stem is Martin Porter's stemmer (1980), the algorithm of SQLite's
// "porter" tokenizer, for lower-case ASCII words; any other word is
// returned as it is.
func Stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	p := porter{b: []byte(w)}
	p.step1ab()
	p.step1c()
	p.step2()
	p.step3()
	p.step4()
	p.step5()
	return string(p.b)
}

type porter struct {
	b []byte
	j int // the end of the stem, once ends matched a suffix
}

// cons says whether b[i] is a consonant.
func (p *porter) cons(i int) bool {
	switch p.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !p.cons(i-1)
	}
	return true
}

// m is the number of vowel-consonant sequences in b[:n].
func (p *porter) m(n int) int {
	c, i := 0, 0
	for i < n && p.cons(i) {
		i++
	}
	for i < n {
		for i < n && !p.cons(i) {
			i++
		}
		if i >= n {
			break
		}
		c++
		for i < n && p.cons(i) {
			i++
		}
	}
	return c
}

// vowelIn says whether b[:n] holds a vowel.
func (p *porter) vowelIn(n int) bool {
	for i := 0; i < n; i++ {
		if !p.cons(i) {
			return true
		}
	}
	return false
}

// doubleC says whether b[i-1:i+1] is a double consonant.
func (p *porter) doubleC(i int) bool {
	return i >= 1 && p.b[i] == p.b[i-1] && p.cons(i)
}

// cvc says whether b[i-2:i+1] is consonant-vowel-consonant, the last not
// w, x or y.
func (p *porter) cvc(i int) bool {
	if i < 2 || !p.cons(i) || p.cons(i-1) || !p.cons(i-2) {
		return false
	}
	switch p.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends says whether b ends with s, and sets j to where s begins.
func (p *porter) ends(s string) bool {
	n := len(p.b)
	if len(s) > n || string(p.b[n-len(s):]) != s {
		return false
	}
	p.j = n - len(s)
	return true
}

// setTo replaces b[j:] with s.
func (p *porter) setTo(s string) { p.b = append(p.b[:p.j], s...) }

// r replaces the suffix with s when the stem's m is above 0.
func (p *porter) r(s string) {
	if p.m(p.j) > 0 {
		p.setTo(s)
	}
}

func (p *porter) step1ab() {
	if p.b[len(p.b)-1] == 's' {
		switch {
		case p.ends("sses"):
			p.b = p.b[:len(p.b)-2]
		case p.ends("ies"):
			p.setTo("i")
		case len(p.b) >= 2 && p.b[len(p.b)-2] != 's':
			p.b = p.b[:len(p.b)-1]
		}
	}
	if p.ends("eed") {
		if p.m(p.j) > 0 {
			p.b = p.b[:len(p.b)-1]
		}
		return
	}
	if (p.ends("ed") || p.ends("ing")) && p.vowelIn(p.j) {
		p.b = p.b[:p.j]
		n := len(p.b) - 1
		switch {
		case p.ends("at"):
			p.setTo("ate")
		case p.ends("bl"):
			p.setTo("ble")
		case p.ends("iz"):
			p.setTo("ize")
		case p.doubleC(n):
			if c := p.b[n]; c != 'l' && c != 's' && c != 'z' {
				p.b = p.b[:n]
			}
		case p.m(len(p.b)) == 1 && p.cvc(n):
			p.b = append(p.b, 'e')
		}
	}
}

func (p *porter) step1c() {
	if p.ends("y") && p.vowelIn(p.j) {
		p.b[len(p.b)-1] = 'i'
	}
}

var step2Rules = []struct{ from, to string }{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"},
	{"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

var step3Rules = []struct{ from, to string }{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
	"ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

func (p *porter) step2() {
	for _, r := range step2Rules {
		if p.ends(r.from) {
			p.r(r.to)
			return
		}
	}
}

func (p *porter) step3() {
	for _, r := range step3Rules {
		if p.ends(r.from) {
			p.r(r.to)
			return
		}
	}
}

func (p *porter) step4() {
	for _, s := range step4Suffixes {
		if !p.ends(s) {
			continue
		}
		if s == "ion" && (p.j == 0 || p.b[p.j-1] != 's' && p.b[p.j-1] != 't') {
			return
		}
		if p.m(p.j) > 1 {
			p.b = p.b[:p.j]
		}
		return
	}
}

func (p *porter) step5() {
	n := len(p.b)
	if p.b[n-1] == 'e' {
		if a := p.m(n - 1); a > 1 || a == 1 && !p.cvc(n-2) {
			p.b = p.b[:n-1]
		}
	}
	n = len(p.b)
	if p.b[n-1] == 'l' && p.doubleC(n-1) && p.m(n) > 1 {
		p.b = p.b[:n-1]
	}
}
