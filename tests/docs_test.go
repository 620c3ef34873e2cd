package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// Issue 37: the README stays short (what Blaze is, the two commands, the
// use, the promises, links); details go to docs/.
func TestReadmeShort(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 150 {
		t.Errorf("README.md has %d lines, more than 150: move the details to docs/", n)
	}
}

// Issue 37: every link in the README and docs/*.md to a file of the
// repository, or to a heading of a Markdown file, resolves. Headings are
// named as GitHub names them, so a renamed heading breaks the links to it.
func TestDocLinks(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, link := range markdownLinks(string(text)) {
			if err := checkLink(f, link, anchors); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}

var (
	linkPattern    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	headingPattern = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*$`)
	schemePattern  = regexp.MustCompile(`^[a-z]+:`)
	inlineLink     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// outsideFences returns the lines of a Markdown text outside ``` blocks.
func outsideFences(text string) []string {
	var out []string
	fenced := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, l)
		}
	}
	return out
}

func markdownLinks(text string) []string {
	var links []string
	for _, l := range outsideFences(text) {
		for _, m := range linkPattern.FindAllStringSubmatch(l, -1) {
			if !schemePattern.MatchString(m[1]) {
				links = append(links, m[1])
			}
		}
	}
	return links
}

func checkLink(from, link string, anchors map[string]map[string]bool) error {
	path, anchor, _ := strings.Cut(link, "#")
	target := from
	if path != "" {
		target = filepath.Join(filepath.Dir(from), filepath.FromSlash(path))
		if _, err := os.Stat(target); err != nil {
			return fmt.Errorf("link %s: %w", link, err)
		}
	}
	if anchor == "" {
		return nil
	}
	if filepath.Ext(target) != ".md" {
		return fmt.Errorf("link %s: a heading in a file that is not Markdown", link)
	}
	if anchors[target] == nil {
		text, err := os.ReadFile(target)
		if err != nil {
			return err
		}
		anchors[target] = headingAnchors(string(text))
	}
	if !anchors[target][anchor] {
		return fmt.Errorf("link %s: no heading %q in %s", link, anchor, target)
	}
	return nil
}

// headingAnchors names a Markdown file's headings as GitHub does: lower
// case, links reduced to their text, everything but letters, digits,
// spaces, hyphens and underscores dropped, spaces made hyphens, and a
// repeated name numbered from -1.
func headingAnchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range outsideFences(text) {
		m := headingPattern.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		h := inlineLink.ReplaceAllString(strings.ToLower(m[1]), "$1")
		var b strings.Builder
		for _, r := range h {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		name := b.String()
		if n := seen[name]; n > 0 {
			out[fmt.Sprintf("%s-%d", name, n)] = true
		} else {
			out[name] = true
		}
		seen[name]++
	}
	return out
}
