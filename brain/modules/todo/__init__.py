"""Tasks: a person's to-dos with due dates, priorities, one level of subtasks and reminders."""
