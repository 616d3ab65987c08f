"""The ledger on one DynamoDB table.

| item | pk | sk | attributes |
|---|---|---|---|
| tenant | `TENANT#{tenant}` | `META` | `tier`, `created_at` |
| key (lookup by hash) | `KEY#{sha256 of key}` | `META` | the key record (never the key) |
| key (listing, revoking) | `TENANT#{tenant}` | `KEY#{key_id}` | `key_hash` and the public fields |
| key id index | `KEYID#{key_id}` | `META` | `key_hash`, `tenant` |
| monthly counter | `TENANT#{tenant}` | `USAGE#{yyyy-mm}#{unit}` | `used` |
| request record | `TENANT#{tenant}` | `REQ#{timestamp}#{request_id}` | route, units, `est_cost_usd`, `expires_at` (TTL) |

Quotas are exact under concurrency because each increment is one conditional `UpdateItem`
(`used + amount <= limit`), never a read followed by a write.
"""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

from sourcerer.ledger.base import UsageRecord
from sourcerer.tenancy import TIERS, KeyRecord, TenancyError


def table_definition(name: str) -> dict[str, Any]:
    """The table as `create_table` takes it (template.yaml declares the same key schema)."""
    return {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "BillingMode": "PAY_PER_REQUEST",
    }


class DynamoDBLedger:
    """Constructing it connects nowhere; the boto3 resource is created on first use."""

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
        return getattr(exc, "response", {}).get("Error", {}).get("Code") in (
            "ConditionalCheckFailedException",
            "TransactionCanceledException",
        )

    def create_tenant(self, tenant: str, tier: str) -> dict[str, Any]:
        if tier not in TIERS:
            raise TenancyError(f"tier must be one of {', '.join(TIERS)}")
        self.table.update_item(
            Key={"pk": f"TENANT#{tenant}", "sk": "META"},
            UpdateExpression="SET tier = :tier, created_at = if_not_exists(created_at, :now)",
            ExpressionAttributeValues={":tier": tier, ":now": Decimal(str(time.time()))},
        )
        return self.get_tenant(tenant) or {}

    def get_tenant(self, tenant: str) -> dict[str, Any] | None:
        item = self.table.get_item(Key={"pk": f"TENANT#{tenant}", "sk": "META"}).get("Item")
        return {"tenant": tenant, "tier": item["tier"], "created_at": float(item["created_at"])} if item else None

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

    def consume(self, tenant: str, unit: str, amount: int, limit: int | None, month: str) -> bool:
        kwargs: dict[str, Any] = {
            "Key": {"pk": f"TENANT#{tenant}", "sk": f"USAGE#{month}#{unit}"},
            "UpdateExpression": "ADD used :n",
            "ExpressionAttributeValues": {":n": amount},
        }
        if limit is not None:
            if amount > limit:
                return False
            kwargs["ConditionExpression"] = "attribute_not_exists(used) OR used <= :max"
            kwargs["ExpressionAttributeValues"][":max"] = limit - amount
        try:
            self.table.update_item(**kwargs)
        except Exception as exc:
            if self._conditional_failed(exc):
                return False
            raise
        return True

    def usage(self, tenant: str, month: str) -> dict[str, int]:
        from boto3.dynamodb.conditions import Key

        items = self.table.query(
            KeyConditionExpression=Key("pk").eq(f"TENANT#{tenant}") & Key("sk").begins_with(f"USAGE#{month}#")
        )["Items"]
        return {i["sk"].rsplit("#", 1)[1]: int(i["used"]) for i in items}

    def record_usage(self, record: UsageRecord) -> None:
        self.table.put_item(
            Item={
                "pk": f"TENANT#{record.tenant}",
                "sk": f"REQ#{record.timestamp:017.6f}#{record.request_id}",
                "record": record.model_dump_json(),
                "expires_at": record.expires_at,
            }
        )

    def usage_records(self, tenant: str, since: float = 0.0) -> list[UsageRecord]:
        from boto3.dynamodb.conditions import Key

        items = self.table.query(
            KeyConditionExpression=Key("pk").eq(f"TENANT#{tenant}") & Key("sk").between(f"REQ#{since:017.6f}", "REQ#~")
        )["Items"]
        return [UsageRecord.model_validate_json(i["record"]) for i in items]
