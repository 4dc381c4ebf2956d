// Command goregexp answers, with Go's own regexp package, what the engine's Go regexp layer must
// answer: for each {pattern, text} case on stdin (JSON array) it prints the compile error, or
// MatchString, FindString and FindAllString(text, -1) (JSON array on stdout).
//
//	go run ./devenv/goregexp < test/fixtures/regexp/cases.json > test/fixtures/regexp/go-results.json
package main

import (
	"encoding/json"
	"os"
	"regexp"
)

type testCase struct {
	Pattern string `json:"pattern"`
	Text    string `json:"text"`
}

type result struct {
	Pattern string   `json:"pattern"`
	Text    string   `json:"text"`
	Error   string   `json:"error,omitempty"`
	Match   bool     `json:"match"`
	Find    *string  `json:"find"`
	FindAll []string `json:"findAll"`
}

func main() {
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		r := result{Pattern: c.Pattern, Text: c.Text, FindAll: []string{}}
		re, err := regexp.Compile(c.Pattern)
		if err != nil {
			r.Error = err.Error()
		} else {
			r.Match = re.MatchString(c.Text)
			if loc := re.FindStringIndex(c.Text); loc != nil {
				s := c.Text[loc[0]:loc[1]]
				r.Find = &s
			}
			if all := re.FindAllString(c.Text, -1); all != nil {
				r.FindAll = all
			}
		}
		results = append(results, r)
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", "  ")
	out.SetEscapeHTML(false)
	if err := out.Encode(results); err != nil {
		panic(err)
	}
}
