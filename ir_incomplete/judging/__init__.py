"""Judgment sets: build pools and samples, choose what to judge next, measure judge agreement."""

from ir_incomplete.judging._candidates import Candidates
from ir_incomplete.judging.pools import (
    ADAPTIVE_METHODS,
    POOL_METHODS,
    BudgetPool,
    DepthPool,
    MaxMeanBandit,
    MoveToFront,
    RBPPool,
    RRFPool,
    make_strategy,
    pool,
    read_pool,
    write_pool,
)
from ir_incomplete.judging.strategy import Strategy

__all__ = [
    "Candidates",
    "Strategy",
    "POOL_METHODS",
    "ADAPTIVE_METHODS",
    "pool",
    "DepthPool",
    "BudgetPool",
    "RRFPool",
    "RBPPool",
    "MoveToFront",
    "MaxMeanBandit",
    "make_strategy",
    "read_pool",
    "write_pool",
]
