"""The student and instructor commands of ./course (stdlib only), one module per concern:

common.py       the course's folders (ROOT, BUILD, STATE_DIR) and how a command says things or gives up
exercises.py    exercise ids, their exercise.json, short names (02, schema) resolved to ids
student.py      list, hint, reset and watch; the pristine copies of the stubs and the state under .course/
doctor.py       doctor: the toolchain checks, each with the command that fixes it
judge.py        the judge: the one function that builds its command line and runs it; toolchain.json's flags
reports.py      the one reader and writer of the judge's reports (rows.json, results.json, phase.json), checked
                against autograder/schemas/
grade.py        grade (one exercise, one folder) and the reference solutions' tables of `./course main`
submissions.py  walking a student's upload without following links (link_below, real_dir, hash_tree, ...)
batch.py        batch: a class folder graded in parallel, the gradebook, per-student results and feedback
spreadsheet.py  the one CSV writer: a cell a spreadsheet would read as a formula is made inert (CSV injection)
gradescope.py   gradescope-zip and gradescope-run (the zip's run_autograder), Gradescope's results.json
bench.py        bench: a cold grade, a warm regrade after a one-line edit, a bare compile
main.py         the argument parser of every command; `python -m opcourse.cli` (./course) runs it

The mutants command (maintainers) is opcourse/mutation/, beside the lists it keeps.

State a student accumulates (grades, hints seen, pristine copies of the stubs, backups made by reset) lives in
.course/ at the root of the checkout, which git ignores: a rebuild of build/ keeps it.
"""
