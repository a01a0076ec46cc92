package quorum

import (
	"testing"
	"time"
)

// A member counts one look per stretch without a leader, and a voter one election when
// it knows its leader again; a non-voter counts the looks only.
func TestLookingCountsStretchesWithoutALeader(t *testing.T) {
	var looks, elections int
	figs := Figures{Looking: func() { looks++ }, Elected: func(took time.Duration) {
		if took < 0 {
			t.Errorf("election took %v", took)
		}
		elections++
	}}
	voter := &looking{voter: true, figs: figs}
	voter.found() // a leader already known: nothing to end
	voter.lost()
	voter.lost() // still the same stretch
	voter.found()
	voter.found()
	voter.lost()
	voter.found()
	if looks != 2 || elections != 2 {
		t.Errorf("voter: %d looks, %d elections; want 2 and 2", looks, elections)
	}
	looks, elections = 0, 0
	observer := &looking{figs: figs}
	observer.lost()
	observer.found()
	if looks != 1 || elections != 0 {
		t.Errorf("non-voter: %d looks, %d elections; want 1 and 0", looks, elections)
	}
	(&looking{voter: true}).lost() // no hooks: nothing to call
}
