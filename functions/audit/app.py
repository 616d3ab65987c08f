"""Audit function: the scheduled verification audit (an EventBridge schedule, daily by default).

It re-checks the answers logged in the audit window (`SOURCERER_AUDIT_WINDOW_DAYS`) of every tenant and stores
one finding per answer in the ledger. A run invoked by hand may narrow it: `{"detail": {"since": "7d",
"tenant": "acme"}}`. Runs are idempotent, so a run cut short by the Lambda timeout is simply continued by the next.
"""

import time

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.data_classes import EventBridgeEvent, event_source
from sourcerer.service.audit import parse_since
from sourcerer.service.wiring import get_service

logger = Logger()
tracer = Tracer()
metrics = Metrics()
STOP_BEFORE_TIMEOUT_MS = 30_000  # take no new answer this close to the timeout; the next run picks up the rest


@logger.inject_lambda_context(log_event=True)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
@event_source(data_class=EventBridgeEvent)
def lambda_handler(event: EventBridgeEvent, context):
    service = get_service()
    detail = event.detail or {}
    since = parse_since(detail.get("since"), time.time())
    report = service.run_audit(
        since,
        tenants=[detail["tenant"]] if detail.get("tenant") else None,
        should_stop=lambda: context.get_remaining_time_in_millis() < STOP_BEFORE_TIMEOUT_MS,
    )
    # charges of requests whose function died mid-request (a timeout, a crash): settled when their document was
    # stored, else given back (those pending past billing.RECOVERY_GRACE_S, whichever function wrote them)
    recovered = service.recover_charges()
    metrics.add_metric(name="ChargesRecovered", unit=MetricUnit.Count, value=sum(recovered.values()))
    metrics.add_metric(name="AnswersChecked", unit=MetricUnit.Count, value=report.answers_checked)
    metrics.add_metric(name="AuditErrors", unit=MetricUnit.Count, value=len(report.errors))
    metrics.add_metric(name="AuditIncomplete", unit=MetricUnit.Count, value=0 if report.complete else 1)
    # by status, as a dimension: every finding of this run, and the new ones (re-runs add no new ones)
    for metric, counts in (("Findings", report.by_status()), ("NewFindings", report.by_status(only_new=True))):
        for status, count in counts.items():
            with single_metric(
                name=metric, unit=MetricUnit.Count, value=count, default_dimensions=metrics.default_dimensions
            ) as m:
                m.add_dimension(name="status", value=status)
    summary = {
        "since": report.since,
        "tenants": len(report.tenants),
        "answers_checked": report.answers_checked,
        "refusals_skipped": report.refusals_skipped,
        "findings": report.by_status(),
        "new_findings": report.by_status(only_new=True),
        "complete": report.complete,
        "errors": report.errors,
        "charges_recovered": recovered,
    }
    logger.info("audit run finished", extra=summary)
    return summary
