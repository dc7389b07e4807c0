"""The feedback loop: what people do with nudges (acted, dismissed, snoozed, expired, auto-resolved) and
what the rule engine learns from it (move a rule later, back off), every change undoable."""
