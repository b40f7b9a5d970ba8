"""The commands' floor: argument parsing, the text and JSON they print, and the one sentence a bad
input gets (`ragsim audit`, `eval`, `inspect`, `export`, `ask`). It imports the floors below it
(jobs, corpus, clients); nothing below imports it."""
