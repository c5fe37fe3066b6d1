package parser

// Closest returns the name among names that word is most likely a typo of
// — at most one edit away for short words, two for words of five or more
// bytes, ties going to the earlier name — or "" when none is that close.
// It is for "did you mean ...?" hints about names and argument keys.
func Closest(word string, names []string) string {
	limit := 1
	if len(word) >= 5 {
		limit = 2
	}
	best, bestD := "", limit+1
	for _, n := range names {
		if n == word {
			continue
		}
		if d := distance(word, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two adjacent bytes.
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
