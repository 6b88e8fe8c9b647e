// Package schedules creates, updates and deletes Temporal schedules by ID:
// the install's drift checks and its cron actions share it.
package schedules
