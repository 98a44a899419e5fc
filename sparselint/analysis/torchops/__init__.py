"""What torch does with each op and API, as data the evaluation reads."""
