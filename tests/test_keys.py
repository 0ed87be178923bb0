"""Idempotency keys: found wherever they are passed, and judged by where they come from
(AG201 missing, AG202 model-supplied, AG203 fresh per call, AG204 hash of the arguments)."""

from __future__ import annotations

import textwrap

import pytest

from .conftest import ScanFiles

HEADER = "from langchain_core.tools import tool\n"


def tool_source(imports: str, body: str, params: str = "cart_id: str") -> str:
    return (
        HEADER
        + textwrap.dedent(imports).strip()
        + "\n\n\n@tool\ndef create_order("
        + params
        + ") -> object:\n"
        + '    """Create an order."""\n'
        + textwrap.indent(textwrap.dedent(body).strip(), "    ")
        + "\n"
    )


def key_codes(scan_files: ScanFiles, source: str, extra: dict[str, str] | None = None) -> list[str]:
    result = scan_files({"agent.py": source, **(extra or {})})
    return sorted({f.code for f in result.findings if f.code.startswith("AG2")})


RUNTIME = "import requests\nfrom agentguard.runtime import current_call"

# A key the service can deduplicate on, passed in each of the ways code passes one.
STABLE_KEYS = [
    (
        "header-literal",
        RUNTIME,
        'requests.post("https://x", json={"cart": cart_id}, '
        'headers={"Idempotency-Key": current_call().idempotency_key})',
    ),
    (
        "headers-variable",
        RUNTIME,
        'headers = {"Idempotency-Key": current_call().idempotency_key}\n'
        'requests.post("https://x", json={"cart": cart_id}, headers=headers)',
    ),
    (
        "headers-subscript",
        RUNTIME,
        'headers = {"Content-Type": "application/json"}\n'
        'headers["Idempotency-Key"] = current_call().idempotency_key\n'
        'requests.post("https://x", json={"cart": cart_id}, headers=headers)',
    ),
    (
        "headers-local-key-variable",
        RUNTIME,
        "key = current_call().idempotency_key\n"
        'requests.post("https://x", json={"cart": cart_id}, headers={"Idempotency-Key": key})',
    ),
    (
        "double-star-kwargs",
        RUNTIME,
        'kwargs = {"headers": {"Idempotency-Key": current_call().idempotency_key}}\n'
        'requests.post("https://x", json={"cart": cart_id}, **kwargs)',
    ),
    (
        "stripe-kwarg",
        "import stripe\nfrom agentguard.runtime import current_call",
        "stripe.PaymentIntent.create(amount=100, currency='eur', "
        "idempotency_key=current_call().idempotency_key)",
    ),
    (
        "stripe-options",
        "import stripe\nfrom agentguard.runtime import current_call",
        "client = stripe.StripeClient('sk')\n"
        "client.v1.payment_intents.create(params={'amount': 100}, "
        "options={'idempotency_key': current_call().idempotency_key})",
    ),
    (
        "scoped-fstring",
        "import requests",
        'key = f"order:{user_id}:{cart_id}:{run_id}"\n'
        'requests.post("https://x", json={"cart": cart_id}, headers={"Idempotency-Key": key})',
    ),
    (
        "tool-call-id",
        "import requests",
        'requests.post("https://x", json={"cart": cart_id}, '
        'headers={"Idempotency-Key": f"{tool_call_id}:{cart_id}"})',
    ),
    (
        "approval-id",
        "import requests",
        'requests.post("https://x", json={"cart": cart_id}, '
        'headers={"Idempotency-Key": approval.id})',
    ),
    (
        "aws-client-token",
        "import boto3",
        'ec2 = boto3.client("ec2")\n'
        'ec2.run_instances(ImageId="ami", MinCount=1, MaxCount=1, ClientToken=f"{run_id}:{cart_id}")',
    ),
    (
        "sqs-dedup",
        "import boto3",
        'sqs = boto3.client("sqs")\n'
        'sqs.send_message(QueueUrl="q.fifo", MessageBody=cart_id, MessageGroupId="g", '
        'MessageDeduplicationId=f"{run_id}:{cart_id}")',
    ),
    (
        "celery-task-id",
        "from app.tasks import place_order",
        'place_order.apply_async(args=[cart_id], task_id=f"order:{run_id}:{cart_id}")',
    ),
]


@pytest.mark.parametrize(
    ("imports", "body"), [pytest.param(*case[1:], id=case[0]) for case in STABLE_KEYS]
)
def test_stable_key_passed_any_way_gives_no_key_finding(
    scan_files: ScanFiles, imports: str, body: str
) -> None:
    params = "cart_id: str, user_id: str = '', run_id: str = '', tool_call_id: str = ''"
    params += ", approval: object = None"
    # run/user/approval ids here stand for values the framework injects; declare them as
    # injected by reading them from a context object in real code. Parameters named like
    # scope ids are not reported as model-supplied keys.
    source = tool_source(imports, body, params=params)
    assert key_codes(scan_files, source) == []


MISSING = [
    ("requests-post", "import requests", 'requests.post("https://x", json={"cart": cart_id})'),
    (
        "unrelated-header",
        "import requests",
        'requests.post("https://x", json={"cart": cart_id}, headers={"Authorization": "Bearer t"})',
    ),
    ("stripe-no-key", "import stripe", "stripe.Charge.create(amount=100, currency='eur')"),
    (
        "sqs-no-dedup",
        "import boto3",
        'sqs = boto3.client("sqs")\nsqs.send_message(QueueUrl="q", MessageBody=cart_id)',
    ),
    ("celery-no-task-id", "from app.tasks import place_order", "place_order.delay(cart_id)"),
]


@pytest.mark.parametrize(
    ("imports", "body"), [pytest.param(*case[1:], id=case[0]) for case in MISSING]
)
def test_missing_key_is_ag201(scan_files: ScanFiles, imports: str, body: str) -> None:
    assert key_codes(scan_files, tool_source(imports, body)) == ["AG201"]


def test_model_supplied_key_parameter(scan_files: ScanFiles) -> None:
    source = tool_source(
        "import requests",
        'requests.post("https://x", json={"cart": cart_id}, headers={"Idempotency-Key": key})',
        params="cart_id: str, key: str",
    )
    assert key_codes(scan_files, source) == ["AG202"]


def test_model_supplied_key_through_a_helper_parameter(scan_files: ScanFiles) -> None:
    helper = textwrap.dedent(
        """
        import requests

        def place(cart_id: str, idem: str) -> dict:
            headers = {"Idempotency-Key": idem}
            return requests.post("https://x", json={"cart": cart_id}, headers=headers).json()
        """
    )
    source = tool_source(
        "from app.orders import place",
        "return place(cart_id, idem=idempotency_key)",
        params="cart_id: str, idempotency_key: str",
    )
    result = scan_files({"app/__init__.py": "", "app/orders.py": helper, "app/agent.py": source})
    ag202 = [f for f in result.findings if f.code == "AG202"]
    assert len(ag202) == 1
    assert "idempotency_key" in ag202[0].message
    assert "AG201" not in {f.code for f in result.findings}


def test_helper_key_from_runtime_in_the_caller_is_stable(scan_files: ScanFiles) -> None:
    helper = textwrap.dedent(
        """
        import requests

        def place(cart_id: str, idem: str) -> dict:
            return requests.post("https://x", json={"cart": cart_id}, headers={"Idempotency-Key": idem}).json()
        """
    )
    source = tool_source(
        "from app.orders import place\nfrom agentguard.runtime import current_call",
        "return place(cart_id, current_call().idempotency_key)",
    )
    result = scan_files({"app/__init__.py": "", "app/orders.py": helper, "app/agent.py": source})
    assert sorted({f.code for f in result.findings if f.code.startswith("AG2")}) == []


FRESH = [
    (
        "uuid4-literal",
        "import uuid\nimport requests",
        'requests.post("https://x", json={"cart": cart_id}, headers={"Idempotency-Key": str(uuid.uuid4())})',
    ),
    (
        "uuid4-from-import",
        "from uuid import uuid4\nimport requests",
        'key = uuid4().hex\nrequests.post("https://x", json={"cart": cart_id}, headers={"Idempotency-Key": key})',
    ),
    (
        "time",
        "import time\nimport requests",
        'headers = {}\nheaders["Idempotency-Key"] = f"order-{time.time()}"\n'
        'requests.post("https://x", json={"cart": cart_id}, headers=headers)',
    ),
    (
        "secrets",
        "import secrets\nimport stripe",
        "stripe.PaymentIntent.create(amount=1, currency='eur', idempotency_key=secrets.token_hex(16))",
    ),
    (
        "random",
        "import random\nimport requests",
        'requests.post("https://x", headers={"Idempotency-Key": str(random.randint(0, 10**9))})',
    ),
    (
        "stripe-options-uuid",
        "import uuid\nimport stripe",
        "client = stripe.StripeClient('sk')\n"
        "client.v1.payment_intents.create(params={}, options={'idempotency_key': str(uuid.uuid4())})",
    ),
]


@pytest.mark.parametrize(
    ("imports", "body"), [pytest.param(*case[1:], id=case[0]) for case in FRESH]
)
def test_fresh_per_call_key_is_ag203(scan_files: ScanFiles, imports: str, body: str) -> None:
    assert key_codes(scan_files, tool_source(imports, body)) == ["AG203"]


def test_fresh_key_in_guarded_decorator(scan_files: ScanFiles) -> None:
    source = HEADER + textwrap.dedent(
        '''
        import uuid
        import requests
        from agentguard.runtime import guarded, current_call
        from app.runtime import runtime

        @tool
        @guarded(runtime, risk="write", idempotency="conditional", replay="never",
                 key=lambda call: str(uuid.uuid4()))
        def create_order(cart_id: str) -> dict:
            """Create an order."""
            headers = {"Idempotency-Key": current_call().idempotency_key}
            return requests.post("https://x", json={"cart": cart_id}, headers=headers).json()
        '''
    )
    assert key_codes(scan_files, source) == ["AG203"]


def test_guarded_key_from_call_context_is_fine(scan_files: ScanFiles) -> None:
    source = HEADER + textwrap.dedent(
        '''
        import requests
        from agentguard.runtime import guarded, current_call
        from app.runtime import runtime

        @tool
        @guarded(runtime, risk="write", idempotency="conditional", replay="never",
                 key=lambda call: f"order:{call.user_id}:{call.args['cart_id']}:{call.run_id}")
        def create_order(cart_id: str) -> dict:
            """Create an order."""
            return requests.post("https://x", json={"cart": cart_id}).json()
        '''
    )
    assert key_codes(scan_files, source) == []


ARGS_HASH = [
    (
        "sha256-json",
        "import hashlib\nimport json\nimport requests",
        "key = hashlib.sha256(json.dumps({'cart': cart_id, 'qty': qty}, sort_keys=True).encode()).hexdigest()\n"
        'requests.post("https://x", json={"cart": cart_id}, headers={"Idempotency-Key": key})',
    ),
    (
        "uuid5-args",
        "import uuid\nimport requests",
        "key = str(uuid.uuid5(uuid.NAMESPACE_URL, f'{cart_id}:{qty}'))\n"
        'requests.post("https://x", json={"cart": cart_id}, headers={"Idempotency-Key": key})',
    ),
    (
        "md5-str",
        "import hashlib\nimport stripe",
        "stripe.PaymentIntent.create(amount=qty, currency='eur', "
        "idempotency_key=hashlib.md5(str((cart_id, qty)).encode()).hexdigest())",
    ),
]


@pytest.mark.parametrize(
    ("imports", "body"), [pytest.param(*case[1:], id=case[0]) for case in ARGS_HASH]
)
def test_hash_of_arguments_is_ag204(scan_files: ScanFiles, imports: str, body: str) -> None:
    source = tool_source(imports, body, params="cart_id: str, qty: int")
    assert key_codes(scan_files, source) == ["AG204"]


def test_hash_scoped_by_run_and_user_is_fine(scan_files: ScanFiles) -> None:
    source = tool_source(
        "import hashlib\nimport requests\nfrom agentguard.runtime import current_call",
        "call = current_call()\n"
        "key = hashlib.sha256(f'{call.run_id}:{call.user_id}:{cart_id}'.encode()).hexdigest()\n"
        'requests.post("https://x", json={"cart": cart_id}, headers={"Idempotency-Key": key})',
    )
    assert key_codes(scan_files, source) == []
