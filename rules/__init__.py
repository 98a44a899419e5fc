"""The rules: one module per rule, found by `sparselint.rule.all_rules()`."""
