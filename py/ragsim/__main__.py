"""`python -m ragsim`: a request as JSON on stdin, the response as JSON on stdout.

Exit status 0 on success, 2 for a request that breaks the contract (message on stderr), 1 for
input that is not JSON at all. Never a traceback.
"""

import json
import sys

from .api import simulate


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "audit":
        from .audit_cli import main as audit_main

        return audit_main(argv[1:])
    if argv and argv[0] == "eval":
        from .eval_cli import main as eval_main

        return eval_main(argv[1:])
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    try:
        request = json.loads(sys.stdin.read())
    except ValueError as e:
        print(f"ragsim: the input is not valid JSON ({e}); pipe a request object on stdin.", file=sys.stderr)
        return 1
    response = simulate(request)
    json.dump(response, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    if "error" in response:
        err = response["error"]
        print(f"ragsim: {err['field']}: {err['message']}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
