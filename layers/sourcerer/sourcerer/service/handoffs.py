"""Posting a new hand-off where people will see it: a webhook (`SOURCERER_HANDOFF_WEBHOOK`, JSON POST) and an SQS
queue (`SOURCERER_HANDOFF_QUEUE`; the SAM stack creates one). Delivery is best effort and never fails the answer:
the hand-off is in the ledger either way, and `delivered` says where else it went."""

from __future__ import annotations

import logging

from sourcerer.ledger.base import HandoffRecord
from sourcerer.settings import Settings

log = logging.getLogger("sourcerer.service.handoffs")
WEBHOOK_TIMEOUT_S = 3.0


def message(record: HandoffRecord) -> str:
    """What is posted: the hand-off as the API shows it (without the asking key's ACL groups)."""
    return record.model_dump_json(exclude={"groups", "delivered"})


def deliver(record: HandoffRecord, settings: Settings) -> tuple[list[str], list[str]]:
    """Post `record` to the webhook and queue `settings` name: (where it went, what failed, in words)."""
    delivered, failed = [], []
    if settings.handoff_webhook:
        import httpx  # here: only a configured webhook needs the HTTP client

        try:
            response = httpx.post(
                settings.handoff_webhook,
                content=message(record),
                headers={"Content-Type": "application/json"},
                timeout=WEBHOOK_TIMEOUT_S,
            )
            response.raise_for_status()
            delivered.append("webhook")
        except httpx.HTTPError as exc:
            log.warning("hand-off %s not posted to the webhook: %s", record.answer_id, exc)
            failed.append(f"webhook: {type(exc).__name__}")
    if settings.handoff_queue:
        try:
            _sqs().send_message(  # type: ignore[attr-defined]
                QueueUrl=settings.handoff_queue,
                MessageBody=message(record),
                MessageAttributes={"tenant": {"DataType": "String", "StringValue": record.tenant}},
            )
            delivered.append("queue")
        except Exception as exc:  # noqa: BLE001 - botocore's errors; the hand-off is in the ledger anyway
            log.warning("hand-off %s not sent to the queue: %s", record.answer_id, exc)
            failed.append(f"queue: {type(exc).__name__}")
    return delivered, failed


def _sqs() -> object:
    import boto3  # only where a queue is configured (Lambda has it; a laptop may not)

    return boto3.client("sqs")


__all__ = ["deliver", "message"]
