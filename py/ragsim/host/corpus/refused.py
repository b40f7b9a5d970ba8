"""The one way a command stops with a sentence: `Refused(sentence)` (bad input, an engine that
cannot run, an output that cannot be resumed). Raised on any floor above the clients and said by
the command as `ragsim COMMAND: sentence` on stderr, exit status 2 unless the command says otherwise."""


class Refused(Exception):
    """Bad input or a run that cannot go on, said in one sentence."""
