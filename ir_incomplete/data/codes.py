"""The codes of the ranked-code matrix and the data model's fixed choices.

Codes (``int32``) of a ranked document against the qrels of its topic:

* ``g >= 0``           judged, with grade ``g``
* ``POOLED_UNJUDGED``  in the qrels with a negative grade (trec_eval's "pooled but unjudged": infAP's −1 marks)
* ``UNPOOLED``         not in the qrels of that topic
* ``PAD``              past the end of the ranking
"""

POOLED_UNJUDGED = -2
UNPOOLED = -1
PAD = -3

NEGATIVE_POLICIES = ("pooled_unjudged", "zero")
SCORE_PRECISIONS = ("float32", "float64")

#: grades (qrels relevance values) must lie in this range: the code matrix holds them as int32
GRADE_RANGE = (-(2**31) + 1, 2**31 - 1)
#: the largest grade that measures indexing grades by value (nDCG and GAP families) accept
MAX_INDEXED_GRADE = 4096
