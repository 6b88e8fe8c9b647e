package maintenance_test

import (
	"errors"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/maintenance"
)

func at(t *testing.T, zone, s string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNext(t *testing.T) {
	berlinWeekend := maintenance.Window{Days: []string{"sat", "sun"}, Start: "02:00", Duration: "4h", TimeZone: "Europe/Berlin"}
	nightly := maintenance.Window{Days: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, Start: "23:00", Duration: "2h", TimeZone: "UTC"}
	springGap := maintenance.Window{Days: []string{"sun"}, Start: "02:30", Duration: "1h", TimeZone: "Europe/Berlin"}
	autumnTwice := maintenance.Window{Days: []string{"sun"}, Start: "02:30", Duration: "1h", TimeZone: "Europe/Berlin"}
	tuesdayNY := maintenance.Window{Days: []string{"tue"}, Start: "09:00", Duration: "30m", TimeZone: "America/New_York"}
	utc := func(s string) time.Time { return at(t, "UTC", s) }
	cases := []struct {
		name       string
		windows    []maintenance.Window
		now        time.Time
		open       bool
		start, end time.Time
	}{
		// 2026-11-26 is a Thursday.
		{"before a weekend window", []maintenance.Window{berlinWeekend}, utc("2026-11-26 12:00"), false,
			at(t, "Europe/Berlin", "2026-11-28 02:00"), at(t, "Europe/Berlin", "2026-11-28 06:00")},
		{"inside it", []maintenance.Window{berlinWeekend}, at(t, "Europe/Berlin", "2026-11-29 05:59"), true,
			at(t, "Europe/Berlin", "2026-11-29 02:00"), at(t, "Europe/Berlin", "2026-11-29 06:00")},
		{"at its end: the next one", []maintenance.Window{berlinWeekend}, at(t, "Europe/Berlin", "2026-11-29 06:00"), false,
			at(t, "Europe/Berlin", "2026-12-05 02:00"), at(t, "Europe/Berlin", "2026-12-05 06:00")},
		{"spanning midnight, after it", []maintenance.Window{nightly}, utc("2026-11-27 00:30"), true,
			utc("2026-11-26 23:00"), utc("2026-11-27 01:00")},
		{"spanning midnight, before it", []maintenance.Window{nightly}, utc("2026-11-26 22:00"), false,
			utc("2026-11-26 23:00"), utc("2026-11-27 01:00")},
		{"several windows: the first to open", []maintenance.Window{berlinWeekend, tuesdayNY}, utc("2026-11-29 12:00"), false,
			at(t, "America/New_York", "2026-12-01 09:00"), at(t, "America/New_York", "2026-12-01 09:30")},
		{"several windows: the one open", []maintenance.Window{tuesdayNY, berlinWeekend}, utc("2026-11-28 03:00"), true,
			at(t, "Europe/Berlin", "2026-11-28 02:00"), at(t, "Europe/Berlin", "2026-11-28 06:00")},
		// Berlin's clock jumps from 02:00 to 03:00 on 2026-03-29: 02:30 never comes, the window opens at 03:00
		// CEST (01:00 UTC) and lasts its hour.
		{"DST spring: a start the clock skips", []maintenance.Window{springGap}, utc("2026-03-28 12:00"), false,
			utc("2026-03-29 01:00"), utc("2026-03-29 02:00")},
		// On 2026-10-25 it goes back from 03:00 to 02:00: 02:30 comes twice, the window opens at the first (00:30 UTC).
		{"DST autumn: a start the clock reads twice", []maintenance.Window{autumnTwice}, utc("2026-10-24 12:00"), false,
			utc("2026-10-25 00:30"), utc("2026-10-25 01:30")},
		// A 4h window on the spring day lasts 4 hours: 02:00 CET to 07:00 CEST.
		{"DST spring: a duration is elapsed time", []maintenance.Window{berlinWeekend}, utc("2026-03-29 04:30"), true,
			utc("2026-03-29 01:00"), utc("2026-03-29 05:00")},
		{"the week after a DST change keeps local time", []maintenance.Window{berlinWeekend}, utc("2026-03-30 12:00"), false,
			at(t, "Europe/Berlin", "2026-04-04 02:00"), at(t, "Europe/Berlin", "2026-04-04 06:00")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ok := maintenance.Next(c.windows, c.now)
			if !ok {
				t.Fatal("no window")
			}
			if !s.Start.Equal(c.start) || !s.End.Equal(c.end) {
				t.Errorf("Next = %s – %s, want %s – %s", s.Start.UTC(), s.End.UTC(), c.start.UTC(), c.end.UTC())
			}
			if got := maintenance.Open(c.windows, c.now); got != c.open {
				t.Errorf("Open = %v, want %v", got, c.open)
			}
		})
	}
	if _, ok := maintenance.Next(nil, time.Now()); ok {
		t.Error("Next without windows found one")
	}
}

func TestValidate(t *testing.T) {
	good := maintenance.Window{Days: []string{"sat"}, Start: "02:00", Duration: "4h", TimeZone: "Europe/Berlin"}
	with := func(f func(w *maintenance.Window)) []maintenance.Window {
		w := good
		f(&w)
		return []maintenance.Window{good, w}
	}
	cases := []struct {
		name    string
		windows []maintenance.Window
		field   string
	}{
		{"good", []maintenance.Window{good}, ""},
		{"a week", with(func(w *maintenance.Window) { w.Duration = "168h" }), ""},
		{"bad time zone", with(func(w *maintenance.Window) { w.TimeZone = "Europe/Nowhere" }), "windows[1].time_zone"},
		{"no time zone", with(func(w *maintenance.Window) { w.TimeZone = "" }), "windows[1].time_zone"},
		{"bad day", with(func(w *maintenance.Window) { w.Days = []string{"sat", "caturday"} }), "windows[1].days[1]"},
		{"no day", with(func(w *maintenance.Window) { w.Days = nil }), "windows[1].days"},
		{"bad time", with(func(w *maintenance.Window) { w.Start = "24:00" }), "windows[1].start"},
		{"zero duration", with(func(w *maintenance.Window) { w.Duration = "0s" }), "windows[1].duration"},
		{"over a week", with(func(w *maintenance.Window) { w.Duration = "169h" }), "windows[1].duration"},
		{"not a duration", with(func(w *maintenance.Window) { w.Duration = "4 hours" }), "windows[1].duration"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := maintenance.Validate(c.windows)
			var fe *maintenance.FieldError
			switch {
			case c.field == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case c.field != "" && !errors.As(err, &fe):
				t.Errorf("Validate = %v, want a field error on %s", err, c.field)
			case c.field != "" && fe.Field != c.field:
				t.Errorf("Validate names %s (%v), want %s", fe.Field, err, c.field)
			}
		})
	}
}
