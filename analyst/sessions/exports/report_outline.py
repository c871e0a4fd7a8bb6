"""A transcript arranged as a report reads: each question with its final answer, and behind it the
work that led there (cells, the model's remarks on the way, failed attempts) and the answers it
replaced when the question was asked again.

A question's answer is the last thing the model said in its turn; what it said before is part of
the work, as are the model's cells. Cells of the user's own, run after an answer, make a section
of their own.
File notes stand between sections, where they happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyst.sessions.exports.transcript import Block, Code, Prose


@dataclass
class Section:
    question: Prose | None  # None: cells run outside a question
    answer: Prose | None = None
    work: list[Block] = field(default_factory=list)  # its cells and the model's remarks, in order
    earlier: list[Section] = field(default_factory=list)  # answers replaced by asking again

    @property
    def cells(self) -> list[Code]:
        return [block for block in self.work if isinstance(block, Code)]

    @property
    def closed(self) -> bool:
        """Answered: a cell the user runs next is not part of it."""
        return self.question is not None and self.answer is not None


Item = Section | Prose  # a section, or a note between them


def outline(blocks: list[Block]) -> list[Item]:
    items: list[Item] = []
    current: Section | None = None
    replaced: list[Section] = []  # superseded answers, waiting for the question asked again
    for block in blocks:
        if isinstance(block, Prose) and block.role == "user":
            current = Section(block)
            if block.superseded:
                replaced.append(current)
                continue
            current.earlier, replaced = replaced, []
            items.append(current)
        elif isinstance(block, Prose) and block.role == "note":
            items.append(block)
        elif isinstance(block, Prose):
            current = current or _new_section(items)
            if current.answer is not None:
                current.work.append(current.answer)  # said on the way: not the last word
            current.answer = block
        else:
            if current is None or (block.by == "user" and current.closed):
                current = _new_section(items)
            current.work.append(block)
    if replaced:  # asked again, but the new answer is not in this log (a fork of the old one)
        items.extend(replaced)
    return items


def _new_section(items: list[Item]) -> Section:
    section = Section(None)
    items.append(section)
    return section
