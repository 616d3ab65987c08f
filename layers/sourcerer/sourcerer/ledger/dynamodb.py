"""The ledger on one DynamoDB table. Why it is long: one class implements every role of the `Ledger` port, so
the table's whole layout, below, is read in one place.

| item | pk | sk | attributes |
|---|---|---|---|
| tenant | `TENANT#{tenant}` | `META` | `tier`, `created_at`, `settings` (JSON) |
| tenant registry | `TENANTS` | `{tenant}` | (lets the audit list tenants without a scan) |
| key (lookup by hash) | `KEY#{sha256 of key}` | `META` | the key record (never the key) |
| key (listing, revoking) | `TENANT#{tenant}` | `KEY#{key_id}` | `key_hash` and the public fields |
| key id index | `KEYID#{key_id}` | `META` | `key_hash`, `tenant` |
| monthly counter | `TENANT#{tenant}` | `USAGE#{yyyy-mm}#{unit}` | `used` |
| request record | `TENANT#{tenant}` | `REQ#{timestamp}#{request_id}` | route, units, `est_cost_usd`, `expires_at` (TTL) |
| handoff | `TENANT#{tenant}` | `HANDOFF#{answer_id}` | `record` (JSON), `created_at`, `expires_at` (TTL) |
| answer | `TENANT#{tenant}` | `ANSWER#{answer_id}` | `record` (JSON), `created_at`, `audit` (latest finding, JSON), `audit_fp`, `expires_at` (TTL) |
| audit finding | `TENANT#{tenant}` | `AUDIT#{checked_at}#{answer_id}` | `record` (JSON), `status`, `expires_at` (TTL) |

Answer ids start with their creation time, so "answers since T" is one key range. A finding is written in one
transaction with a conditional update of its answer (`audit_fp <> :fingerprint`), so re-running an audit
records nothing twice, even when two runs overlap.

Quotas are exact under concurrency because each increment is one conditional `UpdateItem`
(`used + amount <= limit`), never a read followed by a write.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any, NoReturn, TypeVar

import numpy as np

from sourcerer.errors import ConfigurationError, NotFound, ProviderError
from sourcerer.ledger.base import (
    CACHE_SCAN,
    AnswerRecord,
    CachedAnswer,
    CachedQuestion,
    Finding,
    HandoffRecord,
    KeyRecord,
    TenantRecord,
    UsageRecord,
    answer_id_floor,
)

# Refusals the caller can do nothing about but wait (a 503 at the API), and misconfigurations (the operator's)
RETRYABLE = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionConflictException",
    "TransactionInProgressException",
}
MISCONFIGURED = {"ResourceNotFoundException", "AccessDeniedException", "UnrecognizedClientException"}
C = TypeVar("C", bound=type)


def _translate(exc: Exception, table: str) -> Exception:
    """A botocore failure as the service's typed errors (as the OpenSearch adapter translates its own); anything
    else (a request this code got wrong) stays what it is: a 500 with a request id, and the operator's log."""
    from botocore.exceptions import BotoCoreError, ClientError

    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        if code in RETRYABLE:
            return ProviderError(f"DynamoDB is refusing requests for now ({code}); retry later")
        if code in MISCONFIGURED:
            return ConfigurationError(f"DynamoDB table {table!r}: {code} (deploy the stack, or check SOURCERER_TABLE and the role)")
    elif isinstance(exc, BotoCoreError):  # no connection, a timeout, no credentials
        return ProviderError(f"DynamoDB could not be reached: {type(exc).__name__}")
    return exc


def _raise_typed(exc: Exception, table: str) -> NoReturn:
    """Raise `exc` as `_translate` types it, from the original (or the original itself, untouched)."""
    translated = _translate(exc, table)
    if translated is exc:
        raise exc
    raise translated from exc


def _translated(cls: C) -> C:
    """Every public method of `cls` raises typed errors for DynamoDB's failures, while its result is iterated too."""

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        def pages(self: Any, items: Iterator[Any]) -> Iterator[Any]:
            try:
                yield from items
            except Exception as exc:
                _raise_typed(exc, self.table_name)

        @functools.wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                result = method(self, *args, **kwargs)
            except Exception as exc:
                _raise_typed(exc, self.table_name)
            return pages(self, result) if inspect.isgenerator(result) else result

        return wrapper

    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(member):
            setattr(cls, name, wrap(member))
    return cls


def _expired(item: dict[str, Any]) -> bool:
    """Past its `expires_at`: DynamoDB's TTL deletes lazily, so an expired item may still be read."""
    return int(item["expires_at"]) < time.time()


def table_definition(name: str) -> dict[str, Any]:
    """The table as `create_table` takes it (template.yaml declares the same key schema)."""
    return {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "BillingMode": "PAY_PER_REQUEST",
    }


@_translated
class DynamoDBLedger:
    """Constructing it connects nowhere; the boto3 resource is created on first use. Throttling and an unreachable
    DynamoDB raise `ProviderError` (503), a missing table or role `ConfigurationError`.

    Why it is wide: it implements every role Protocol of the ledger (`ledger/base.py`: tenants, keys, usage,
    sequencers, the answer log, the answer cache, hand-offs) on one table, whose layout is above."""

    def __init__(self, table_name: str, resource: Any = None) -> None:
        self.table_name = table_name
        self._resource = resource
        self._table: Any = None

    @property
    def table(self) -> Any:
        if self._table is None:
            if self._resource is None:
                import boto3

                self._resource = boto3.resource("dynamodb")
            self._table = self._resource.Table(self.table_name)
        return self._table

    def _conditional_failed(self, exc: Exception) -> bool:
        """Whether a write was refused by its condition (alone, or as one item of a transaction); any other
        failure, a transaction conflict included, is an error for the caller."""
        response = getattr(exc, "response", {})
        code = response.get("Error", {}).get("Code")
        reasons = [r.get("Code") for r in response.get("CancellationReasons", [])]
        return code == "ConditionalCheckFailedException" or (
            code == "TransactionCanceledException" and "ConditionalCheckFailed" in reasons
        )

    def _query(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every item of a query, page after page."""
        while True:
            page = self.table.query(**kwargs)
            yield from page["Items"]
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def create_tenant(self, tenant: str, tier: str) -> TenantRecord:
        self.table.update_item(
            Key={"pk": f"TENANT#{tenant}", "sk": "META"},
            UpdateExpression="SET tier = :tier, created_at = if_not_exists(created_at, :now)",
            ExpressionAttributeValues={":tier": tier, ":now": Decimal(str(time.time()))},
        )
        self.table.put_item(Item={"pk": "TENANTS", "sk": tenant})
        return self.get_tenant(tenant) or {}

    def get_tenant(self, tenant: str) -> TenantRecord | None:
        item = self.table.get_item(Key={"pk": f"TENANT#{tenant}", "sk": "META"}).get("Item")
        if not item:
            return None
        return {
            "tenant": tenant,
            "tier": item["tier"],
            "created_at": float(item["created_at"]),
            "settings": json.loads(item["settings"]) if item.get("settings") else {},
        }

    def update_tenant_settings(self, tenant: str, settings: dict[str, Any]) -> TenantRecord:
        current = self.get_tenant(tenant)
        if current is None:
            raise NotFound(f"no tenant {tenant}")
        merged = {**current["settings"], **settings}
        self.table.update_item(
            Key={"pk": f"TENANT#{tenant}", "sk": "META"},
            UpdateExpression="SET settings = :s",
            ExpressionAttributeValues={":s": json.dumps(merged)},
        )
        return self.get_tenant(tenant) or {}

    def list_tenants(self) -> list[str]:
        from boto3.dynamodb.conditions import Key

        return sorted(item["sk"] for item in self._query(KeyConditionExpression=Key("pk").eq("TENANTS")))

    def put_key(self, record: KeyRecord) -> None:
        data = record.model_dump_json()
        # the resource's client takes plain Python values (boto3 serialises them for DynamoDB)
        self.table.meta.client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": self.table_name, "Item": {"pk": f"KEY#{record.key_hash}", "sk": "META", "record": data}}},
                {
                    "Put": {
                        "TableName": self.table_name,
                        "Item": {
                            "pk": f"TENANT#{record.tenant}",
                            "sk": f"KEY#{record.key_id}",
                            "key_hash": record.key_hash,
                            "record": data,
                        },
                    }
                },
                {
                    "Put": {
                        "TableName": self.table_name,
                        "Item": {
                            "pk": f"KEYID#{record.key_id}",
                            "sk": "META",
                            "key_hash": record.key_hash,
                            "tenant": record.tenant,
                        },
                    }
                },
            ]
        )

    def find_key(self, key_hash: str) -> KeyRecord | None:
        item = self.table.get_item(Key={"pk": f"KEY#{key_hash}", "sk": "META"}, ConsistentRead=True).get("Item")
        return KeyRecord.model_validate_json(item["record"]) if item else None

    def list_keys(self, tenant: str) -> list[KeyRecord]:
        from boto3.dynamodb.conditions import Key

        items = self.table.query(KeyConditionExpression=Key("pk").eq(f"TENANT#{tenant}") & Key("sk").begins_with("KEY#"))["Items"]
        return sorted((KeyRecord.model_validate_json(i["record"]) for i in items), key=lambda k: (k.created_at, k.key_id))

    def revoke_key(self, key_id: str) -> bool:
        pointer = self.table.get_item(Key={"pk": f"KEYID#{key_id}", "sk": "META"}).get("Item")
        if not pointer:
            return False
        record = self.find_key(pointer["key_hash"])
        if record is None:
            return False
        data = record.model_copy(update={"revoked": True}).model_dump_json()
        update = {
            "UpdateExpression": "SET #r = :r",
            "ExpressionAttributeNames": {"#r": "record"},
            "ExpressionAttributeValues": {":r": data},
        }
        self.table.meta.client.transact_write_items(
            TransactItems=[
                {"Update": {"TableName": self.table_name, "Key": {"pk": f"KEY#{record.key_hash}", "sk": "META"}, **update}},
                {
                    "Update": {
                        "TableName": self.table_name,
                        "Key": {"pk": f"TENANT#{record.tenant}", "sk": f"KEY#{key_id}"},
                        **update,
                    }
                },
            ]
        )
        return True

    def _counter_update(self, tenant: str, unit: str, amount: int, limit: int | None, month: str) -> dict[str, Any]:
        """The update that adds `amount` to this month's counter, only while it stays within `limit`."""
        update: dict[str, Any] = {
            "TableName": self.table_name,
            "Key": {"pk": f"TENANT#{tenant}", "sk": f"USAGE#{month}#{unit}"},
            "UpdateExpression": "ADD used :n",
            "ExpressionAttributeValues": {":n": amount},
        }
        if limit is not None:
            update["ConditionExpression"] = "attribute_not_exists(used) OR used <= :max"
            update["ExpressionAttributeValues"][":max"] = limit - amount
        return update

    def consume(self, tenant: str, unit: str, amount: int, limit: int | None, month: str) -> bool:
        if limit is not None and amount > limit:
            return False
        update = self._counter_update(tenant, unit, amount, limit, month)
        del update["TableName"]  # the table resource names it
        try:
            self.table.update_item(**update)
        except Exception as exc:
            if self._conditional_failed(exc):
                return False
            raise
        return True

    def claim_sequencer(self, source: str, sequencer: str) -> bool:
        try:
            self.table.update_item(
                Key={"pk": f"SEQUENCER#{source}", "sk": "META"},
                UpdateExpression="SET sequencer = :s",
                ConditionExpression="attribute_not_exists(sequencer) OR sequencer <= :s",
                ExpressionAttributeValues={":s": sequencer},
            )
        except Exception as exc:
            if self._conditional_failed(exc):
                return False
            raise
        return True

    def sequencer(self, source: str) -> str | None:
        item = self.table.get_item(Key={"pk": f"SEQUENCER#{source}", "sk": "META"}, ConsistentRead=True).get("Item")
        return str(item["sequencer"]) if item else None

    def usage(self, tenant: str, month: str) -> dict[str, int]:
        from boto3.dynamodb.conditions import Key

        items = self.table.query(
            KeyConditionExpression=Key("pk").eq(f"TENANT#{tenant}") & Key("sk").begins_with(f"USAGE#{month}#")
        )["Items"]
        return {i["sk"].rsplit("#", 1)[1]: int(i["used"]) for i in items}

    def record_usage(self, record: UsageRecord) -> None:
        self.table.put_item(Item=self._usage_item(record))

    @staticmethod
    def _usage_item(record: UsageRecord) -> dict[str, Any]:
        item = {
            "pk": f"TENANT#{record.tenant}",
            "sk": f"REQ#{record.timestamp:017.6f}#{record.request_id}",
            "record": record.model_dump_json(),
            "expires_at": record.expires_at,
        }
        if not record.settled:  # sparse: only pending records carry it, so recovery reads few items
            item["pending_since"] = Decimal(str(record.timestamp))
        return item

    def charge(self, record: UsageRecord, unit: str, amount: int, limit: int | None, month: str) -> bool:
        if limit is not None and amount > limit:
            return False
        update = self._counter_update(record.tenant, unit, amount, limit, month)
        try:
            self.table.meta.client.transact_write_items(
                TransactItems=[{"Update": update}, {"Put": {"TableName": self.table_name, "Item": self._usage_item(record)}}]
            )
        except Exception as exc:
            if self._conditional_failed(exc):
                return False
            raise
        return True

    def release(self, record: UsageRecord, unit: str, amount: int, month: str) -> None:
        usage = self._usage_item(record)
        delete = {
            "TableName": self.table_name,
            "Key": {"pk": usage["pk"], "sk": usage["sk"]},
            "ConditionExpression": "attribute_exists(pk)",  # once only: a record already gone gives nothing back
        }
        try:
            self.table.meta.client.transact_write_items(
                TransactItems=[{"Update": self._counter_update(record.tenant, unit, -amount, None, month)}, {"Delete": delete}]
            )
        except Exception as exc:
            if not self._conditional_failed(exc):
                raise

    def pending_usage(self, before: float) -> list[UsageRecord]:
        from boto3.dynamodb.conditions import Attr

        scan: dict[str, Any] = {"FilterExpression": Attr("pending_since").lt(Decimal(str(before)))}
        records: list[UsageRecord] = []
        while True:  # a scan of the sparse attribute: recovery runs rarely (the audit schedule, a restart)
            page = self.table.scan(**scan)
            records += [UsageRecord.model_validate_json(i["record"]) for i in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                return sorted(records, key=lambda r: r.timestamp)
            scan["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def usage_records(self, tenant: str, since: float = 0.0) -> list[UsageRecord]:
        from boto3.dynamodb.conditions import Key

        items = self.table.query(
            KeyConditionExpression=Key("pk").eq(f"TENANT#{tenant}") & Key("sk").between(f"REQ#{since:017.6f}", "REQ#~")
        )["Items"]
        return [UsageRecord.model_validate_json(i["record"]) for i in items]

    # --- the answer log and audit findings -------------------------------------------------------------

    def settle(self, record: UsageRecord, answer: AnswerRecord | None = None) -> None:
        # two single-item puts, not a transaction (which costs double): the usage record already exists from
        # `charge`, and the answer goes first, so a billed answer is always in the log the audit reads
        if answer is not None:
            self.put_answer(answer)
        self.record_usage(record)

    def put_answer(self, record: AnswerRecord) -> None:
        self.table.put_item(
            Item={
                "pk": f"TENANT#{record.tenant}",
                "sk": f"ANSWER#{record.answer_id}",
                "record": record.model_dump_json(exclude={"audit"}),
                "created_at": Decimal(str(record.created_at)),
                "expires_at": record.expires_at,
            }
        )

    @staticmethod
    def _answer(item: dict[str, Any]) -> AnswerRecord | None:
        if _expired(item):
            return None
        record = AnswerRecord.model_validate_json(item["record"])
        record.audit = Finding.model_validate_json(item["audit"]) if item.get("audit") else None
        return record

    def cached_questions(self, tenant: str, context: str, now: float) -> list[CachedQuestion]:
        from boto3.dynamodb.conditions import Attr, Key

        response = self.table.query(
            KeyConditionExpression=Key("pk").eq(f"CACHE#{tenant}#{context}"),
            FilterExpression=Attr("expires_at").gt(Decimal(str(now))),  # TTL deletes lazily: expired items may linger
        )
        entries = [CachedAnswer.model_validate_json(item["record"]) for item in response.get("Items", [])]
        newest = sorted(entries, key=lambda e: -e.created_at)[:CACHE_SCAN]
        return [
            CachedQuestion(key=e.key, question=e.question, vector=np.asarray(e.vector, dtype=np.float32) if e.vector else None)
            for e in newest
        ]

    def cached_answer(self, tenant: str, context: str, key: str, now: float) -> CachedAnswer | None:
        item = self.table.get_item(
            Key={"pk": f"CACHE#{tenant}#{context}", "sk": hashlib.sha256(key.encode()).hexdigest()}
        ).get("Item")
        if item is None:
            return None
        entry = CachedAnswer.model_validate_json(item["record"])
        return entry if entry.expires_at > now else None  # TTL deletes lazily

    def put_cached_answer(self, entry: CachedAnswer) -> None:
        self.table.put_item(
            Item={
                "pk": f"CACHE#{entry.tenant}#{entry.context}",
                "sk": hashlib.sha256(entry.key.encode()).hexdigest(),
                "record": entry.model_dump_json(),
                "expires_at": int(entry.expires_at),  # the table's TTL attribute
            }
        )

    def get_answer(self, tenant: str, answer_id: str) -> AnswerRecord | None:
        item = self.table.get_item(Key={"pk": f"TENANT#{tenant}", "sk": f"ANSWER#{answer_id}"}).get("Item")
        return self._answer(item) if item else None

    def put_handoff(self, record: HandoffRecord) -> None:
        self.table.put_item(
            Item={
                "pk": f"TENANT#{record.tenant}",
                "sk": f"HANDOFF#{record.answer_id}",
                "record": record.model_dump_json(),
                "created_at": Decimal(str(record.created_at)),
                "expires_at": record.expires_at,
            }
        )

    @staticmethod
    def _handoff(item: dict[str, Any]) -> HandoffRecord | None:
        if _expired(item):
            return None
        return HandoffRecord.model_validate_json(item["record"])

    def get_handoff(self, tenant: str, answer_id: str) -> HandoffRecord | None:
        item = self.table.get_item(Key={"pk": f"TENANT#{tenant}", "sk": f"HANDOFF#{answer_id}"}).get("Item")
        return self._handoff(item) if item else None

    def handoffs(self, tenant: str, since: float = 0.0) -> Iterator[HandoffRecord]:
        from boto3.dynamodb.conditions import Key

        items = self._query(
            KeyConditionExpression=Key("pk").eq(f"TENANT#{tenant}") & Key("sk").between(f"HANDOFF#{answer_id_floor(since)}", "HANDOFF#~")
        )
        for item in items:
            record = self._handoff(item)
            if record is not None and record.created_at >= since:
                yield record

    def answers(self, tenant: str, since: float = 0.0, until: float | None = None) -> Iterator[AnswerRecord]:
        from boto3.dynamodb.conditions import Key

        upper = f"ANSWER#{answer_id_floor(until)}" if until is not None else "ANSWER#~"
        items = self._query(
            KeyConditionExpression=Key("pk").eq(f"TENANT#{tenant}") & Key("sk").between(f"ANSWER#{answer_id_floor(since)}", upper)
        )
        for item in items:
            record = self._answer(item)
            if record is not None and since <= record.created_at and (until is None or record.created_at < until):
                yield record

    def record_finding(self, finding: Finding) -> bool:
        try:
            self.table.meta.client.transact_write_items(
                TransactItems=[
                    {
                        "Update": {
                            "TableName": self.table_name,
                            "Key": {"pk": f"TENANT#{finding.tenant}", "sk": f"ANSWER#{finding.answer_id}"},
                            "UpdateExpression": "SET audit = :f, audit_fp = :fp",
                            "ConditionExpression": "attribute_exists(pk) AND (attribute_not_exists(audit_fp) OR audit_fp <> :fp)",
                            "ExpressionAttributeValues": {":f": finding.model_dump_json(), ":fp": finding.fingerprint},
                        }
                    },
                    {
                        "Put": {
                            "TableName": self.table_name,
                            "Item": {
                                "pk": f"TENANT#{finding.tenant}",
                                "sk": f"AUDIT#{finding.checked_at:017.6f}#{finding.answer_id}",
                                "record": finding.model_dump_json(),
                                "status": finding.status,
                                "expires_at": finding.expires_at,
                            },
                        }
                    },
                ]
            )
        except Exception as exc:
            if self._conditional_failed(exc):  # the answer already has this finding (or has expired)
                return False
            raise  # a conflict with a concurrent write is an error the audit records and retries next run
        return True

    def findings(self, tenant: str, since: float = 0.0, status: str | None = None) -> Iterator[Finding]:
        from boto3.dynamodb.conditions import Key

        items = self._query(
            KeyConditionExpression=Key("pk").eq(f"TENANT#{tenant}") & Key("sk").between(f"AUDIT#{since:017.6f}", "AUDIT#~")
        )
        now = time.time()
        for item in items:
            if int(item["expires_at"]) >= now and (status is None or item["status"] == status):
                yield Finding.model_validate_json(item["record"])
