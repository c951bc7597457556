"""Session rotation: the pure policy (which sessions to reset, and why) and the lineage record.

`policy` decides over plain rows from the gateway; `lineage` keeps what was rotated in
memwarden's state database. The job that acts on the decisions is `memwarden.jobs.rotate`.
"""

from memwarden.rotation.lineage import (
    Rotation,
    RotationFailure,
    last_rotations,
    recent_rotation_failures,
    record_rotation,
)
from memwarden.rotation.policy import (
    Decision,
    Policy,
    decide,
    needs_confirmation,
    transcript_context,
)

__all__ = [
    "Decision",
    "Policy",
    "Rotation",
    "RotationFailure",
    "decide",
    "last_rotations",
    "needs_confirmation",
    "recent_rotation_failures",
    "record_rotation",
    "transcript_context",
]
