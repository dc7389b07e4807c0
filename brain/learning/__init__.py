"""Learning the person: the facts the brain keeps about their habits and about how they answer its nudges, found
by rules every night (`nightly`) and proposed by the model every week (`model_facts`), said back to them in their
language (`wording`), listed and forgotten on request (`service`)."""
