"""Where a retrying client is held: the client a tool's write goes through is found as any
other value a name holds; ``self.sqs`` is the attribute the method's own class sets, not
one another class of the module sets under the same name."""

from __future__ import annotations

from .conftest import ScanFiles

# A class whose method sends through the SQS client its __init__ builds with ``{retries}``.
QUEUE_CLASS = """
class {name}:
    def __init__(self) -> None:
        self.sqs = boto3.client("sqs", config=Config(retries={retries}))

    def send(self, body: str) -> str:
        sent = self.sqs.send_message(QueueUrl="https://sqs.example/{queue}", MessageBody=body)
        return sent["MessageId"]
"""
TOOLS = '''
jobs = Jobs()
audit = Audit()


@tool
def enqueue_job(payload: str) -> str:
    """Queue a job."""
    return jobs.send(payload)


@tool
def audit_line(line: str) -> str:
    """Record a line in the audit queue."""
    return audit.send(line)
'''

RETRYING = '{"max_attempts": 5, "mode": "standard"}'
ONCE = '{"total_max_attempts": 1}'


def resent(scan_files: ScanFiles, jobs: str, audit: str) -> set[str]:
    source = "\n\n".join(
        [
            "import boto3\nfrom botocore.config import Config\nfrom langchain_core.tools import tool\n",
            QUEUE_CLASS.format(name="Jobs", retries=jobs, queue="jobs"),
            QUEUE_CLASS.format(name="Audit", retries=audit, queue="audit"),
            TOOLS,
        ]
    )
    return {f.tool or "" for f in scan_files({"agent.py": source}).findings if f.code == "AG902"}


def test_each_class_own_client_setting_is_judged(scan_files: ScanFiles) -> None:
    assert resent(scan_files, RETRYING, ONCE) == {"enqueue_job"}
    assert resent(scan_files, ONCE, RETRYING) == {"audit_line"}
