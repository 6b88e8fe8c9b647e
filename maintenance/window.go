// Package maintenance computes an install's maintenance windows: weekly days
// and a start time in an IANA time zone, open for a duration. It imports only
// the standard library (and its time zone database, so a binary needs none on
// its system), so workflows, activities and the API can all use it.
package maintenance

import (
	"fmt"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // windows name IANA zones; carry the database
)

// MaxDuration is the longest window: a week.
const MaxDuration = 7 * 24 * time.Hour

// Window opens on each of Days at Start (local time in TimeZone) for
// Duration (elapsed time: a 4h window lasts 4h on a DST change day too).
type Window struct {
	Days     []string `json:"days"`      // mon, tue, wed, thu, fri, sat, sun
	Start    string   `json:"start"`     // HH:MM, 24-hour
	Duration string   `json:"duration"`  // a Go duration: 30m, 4h, 1h30m
	TimeZone string   `json:"time_zone"` // IANA, e.g. Europe/Berlin
}

// Slot is one opening of a window.
type Slot struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// FieldError is a window that cannot work, naming its field
// (windows[i].time_zone, …).
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

var dayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Validate checks every window; the first problem is a *FieldError.
func Validate(ws []Window) error {
	for i, w := range ws {
		if _, err := w.parse(); err != nil {
			err.Field = fmt.Sprintf("windows[%d].%s", i, err.Field)
			return err
		}
	}
	return nil
}

// parsed is a checked window.
type parsed struct {
	days         [7]bool
	hour, minute int
	duration     time.Duration
	loc          *time.Location
}

func (w Window) parse() (parsed, *FieldError) {
	var p parsed
	bad := func(field, format string, args ...any) (parsed, *FieldError) {
		return p, &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if len(w.Days) == 0 {
		return bad("days", "is required: one or more of %s", strings.Join(dayNames, ", "))
	}
	for i, d := range w.Days {
		n := slices.Index(dayNames, strings.ToLower(d))
		if n < 0 {
			return bad(fmt.Sprintf("days[%d]", i), "%q is not a day: one of %s", d, strings.Join(dayNames, ", "))
		}
		p.days[n] = true
	}
	t, err := time.Parse("15:04", w.Start)
	if err != nil {
		return bad("start", "%q is not a time of day HH:MM (00:00 to 23:59)", w.Start)
	}
	p.hour, p.minute = t.Hour(), t.Minute()
	if p.duration, err = time.ParseDuration(w.Duration); err != nil {
		return bad("duration", "%q is not a duration (e.g. 30m, 4h, 1h30m)", w.Duration)
	}
	if p.duration <= 0 || p.duration > MaxDuration {
		return bad("duration", "%s must be more than 0 and at most a week (168h)", w.Duration)
	}
	if w.TimeZone == "" || w.TimeZone == "Local" {
		return bad("time_zone", "is required: an IANA time zone such as Europe/Berlin or UTC")
	}
	if p.loc, err = time.LoadLocation(w.TimeZone); err != nil {
		return bad("time_zone", "%q is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)", w.TimeZone)
	}
	return p, nil
}

// Next is the window open at t, or else the next one to open: Start is at
// or before t when t is inside a window (End then the latest end of the
// windows open at t). ok is false without windows (or with invalid ones).
func Next(ws []Window, t time.Time) (s Slot, ok bool) {
	for _, w := range ws {
		p, err := w.parse()
		if err != nil {
			continue
		}
		for _, c := range p.slotsAround(t) {
			switch {
			case !c.End.After(t):
			case !ok, inside(c, t) && (!inside(s, t) || c.End.After(s.End)):
				s, ok = c, true
			case !inside(s, t) && c.Start.Before(s.Start):
				s = c
			}
		}
	}
	return s, ok
}

// Open says whether t is inside one of the windows.
func Open(ws []Window, t time.Time) bool {
	s, ok := Next(ws, t)
	return ok && inside(s, t)
}

func inside(s Slot, t time.Time) bool { return !t.Before(s.Start) && t.Before(s.End) }

// slotsAround lists the window's openings from 8 days before t (a window
// lasts at most a week) to 8 days after.
func (p parsed) slotsAround(t time.Time) []Slot {
	local := t.In(p.loc)
	var out []Slot
	for d := -8; d <= 8; d++ {
		day := time.Date(local.Year(), local.Month(), local.Day()+d, 12, 0, 0, 0, p.loc)
		if !p.days[day.Weekday()] {
			continue
		}
		start := opening(day.Year(), day.Month(), day.Day(), p.hour, p.minute, p.loc)
		out = append(out, Slot{Start: start, End: start.Add(p.duration)})
	}
	return out
}

// opening is the first instant the local clock reads hh:mm on that day: the
// earlier of the two on a day the clock goes back over it, the moment the
// clock jumps forward over it on a day it never reads it.
func opening(y int, m time.Month, d, hh, mm int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, hh, mm, 0, 0, loc)
	if t.Hour() == hh && t.Minute() == mm {
		if earlier := t.Add(-time.Hour); earlier.Hour() == hh && earlier.Minute() == mm {
			return earlier // the clock read hh:mm an hour before too
		}
		return t
	}
	// In a gap: search the first instant whose local clock is past hh:mm.
	lo := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Add(-14 * time.Hour)
	hi := lo.Add(52 * time.Hour)
	want := fmt.Sprintf("%04d-%02d-%02d %02d:%02d", y, m, d, hh, mm)
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if mid.In(loc).Format("2006-01-02 15:04") >= want {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi.Truncate(time.Second).In(loc)
}
