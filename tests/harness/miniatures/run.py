"""`python run.py SCRIPT ARGS`: note this process in $MEMCONFORM_MINIATURE_PIDS (a file named by its
pid, holding SCRIPT and ARGS as JSON), then become SCRIPT. The tests' `reaper` fixture stops every
miniature so noted that a driver left running, and counts how many a driver started."""

import json
import os
import runpy
import sys

folder = os.environ.get("MEMCONFORM_MINIATURE_PIDS")
if folder:
    with open(os.path.join(folder, str(os.getpid())), "w", encoding="utf-8") as note:
        note.write(json.dumps(sys.argv[1:]))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
