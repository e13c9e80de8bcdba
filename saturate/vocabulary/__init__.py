"""What a metric's name says about it: its words (the one tokenizer), whether it measures compute
and in which unit (``names``), its role and the naming conventions the diagnostics read
(``roles``), which way is better (``direction``) and the range of its values (``domains``)."""
