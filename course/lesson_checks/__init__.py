"""Check cells for the lessons' exercises (course machinery, not part of autograd_lens).

Each lesson has a module here, `lesson01`, `lesson02`, ..., whose functions take the
reader's answer and return a `Verdict`, shown in the notebook as one line. What several
lessons' checkers share lives beside them: `answers` (reading the reader's answer),
`seeding` (seeded set-ups that leave the reader's RNG alone) and `spying` (watching the
backward calls the reader's code makes); `distributed` runs lesson 07's two-process DDP
iteration. `set_language("ko")` makes every verdict Korean, for the Korean edition
(notebooks/ko), and gives matplotlib a Hangul font.
"""
from .language import language, say, set_language
from .verdict import Verdict, correct, not_yet, unanswered

__all__ = ["Verdict", "correct", "not_yet", "unanswered", "language", "say", "set_language"]
