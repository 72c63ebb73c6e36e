// Package reminders writes the e-mails sent for overdue loans.
package reminders

import (
	"fmt"
	"time"
)

// Reminder is one overdue loan, as the lending desk reports it.
type Reminder struct {
	Member string
	Title  string
	Due    time.Time
}

// Message is the text of the e-mail.
func (r Reminder) Message(today time.Time) string {
	days := int(today.Sub(r.Due).Hours() / 24)
	return fmt.Sprintf("Dear %s, %q was due %d days ago.", r.Member, r.Title, days)
}

// Overdue keeps the reminders whose due date has passed.
func Overdue(all []Reminder, today time.Time) []Reminder {
	var out []Reminder
	for _, r := range all {
		if today.After(r.Due) {
			out = append(out, r)
		}
	}
	return out
}
