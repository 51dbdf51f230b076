"""The course's Python product code, installed in editable mode into each clone's own environment (tools/setup.sh):

cli/        the student and instructor commands of ./course (`python -m opcourse.cli`)
site/       the site: the build command, the Markdown extension mkdocs.yml loads, GPU evidence, front matter, sources
mutation/   the maintainers' mutation analysis (`./course mutants`), with its lists of equivalent and known survivors
metadata.py the one Python reader of exercise.json and the check catalog (autograder/metadata/)
planted.py  how a planted case (autograder/planted/) becomes a submission folder

The sandboxed worker (autograder/worker/) is not part of it: it runs as scripts inside the sandbox.
"""
