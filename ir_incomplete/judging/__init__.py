"""Building judgments: choosing what to judge next (:mod:`ir_incomplete.judging.judge_next`)."""
