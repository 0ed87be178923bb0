"""SDK families: each client called the way its library's documentation shows, in a tool
of its own; what a user sees is the tool's effects (reads give none) and whether a retry
would repeat a keyless create (AG201).

Many families are judged by the verb of the method alone (``create_issue`` creates,
``list_namespaced_pod`` reads); these cases pin that. Others need catalogue knowledge: a
message sent through a request builder, a write whose method is also a list's (notion's
``blocks.children.append``), an executor whose document decides (GraphQL), a file left
behind only with one argument (``NamedTemporaryFile(delete=False)``).
"""

from __future__ import annotations

import pytest

from .conftest import ScanFiles, kinds_and_codes, only_tool, tool_module

GRAPH = "from msgraph import GraphServiceClient"
GRAPH_CLIENT = 'graph_client = GraphServiceClient(credentials=credential, scopes=["Mail.Send"])'
O365 = "from O365 import Account"
O365_ACCOUNT = 'account = Account(("client-id", "client-secret"))'
SF = "from simple_salesforce import Salesforce"
SF_CLIENT = 'sf = Salesforce(username="u@example.com", password="p", security_token="t")'
TWILIO = "from twilio.rest import Client"
TWILIO_CLIENT = 'client = Client("AC0001", "auth-token")'
STRIPE_CLIENT = 'client = StripeClient("sk_test_0001")'
CALDAV = "import caldav"
CALDAV_CLIENT = (
    'dav = caldav.DAVClient(url="https://cal.example/dav", username="u", password="p")\n'
    'calendar = dav.principal().calendar(name="Work")'
)
GITHUB = "from github import Auth, Github"
GITHUB_CLIENT = 'gh = Github(auth=Auth.Token("token"))'
NOTION = "from notion_client import Client"
NOTION_CLIENT = 'notion = Client(auth="secret")'
K8S = "from kubernetes import client, config"
K8S_API = "config.load_kube_config()\ncore = client.CoreV1Api()"
S3 = "import boto3"
S3_CLIENT = 's3 = boto3.client("s3")'

# (id, imports, prelude, body, async, effect kinds, AG201 expected)
CASES = [
    # Bigtable's data client runs GoogleSQL for Bigtable, which only reads.
    (
        "bigtable-execute-query",
        "from google.cloud.bigtable.data import BigtableDataClient",
        'bigtable = BigtableDataClient(project="analytics")',
        'return [list(row) for row in bigtable.execute_query(value, "events-instance")]',
        False,
        [],
        False,
    ),
    # Microsoft Graph (msgraph-sdk): request builders end in the HTTP verb; a send is a message.
    (
        "msgraph-user-send-mail",
        GRAPH,
        GRAPH_CLIENT,
        "body = SendMailPostRequestBody(message=Message(subject=value))\n"
        'await graph_client.users.by_user_id("u-1").send_mail.post(body)',
        True,
        ["message"],
        True,
    ),
    (
        "msgraph-draft-message-post",
        GRAPH,
        GRAPH_CLIENT,
        "return await graph_client.me.messages.post(Message(subject=value))",
        True,
        ["network_write"],
        True,
    ),
    (
        "msgraph-inbox-get",
        GRAPH,
        GRAPH_CLIENT,
        'return await graph_client.me.mail_folders.by_mail_folder_id("inbox").messages.get()',
        True,
        [],
        False,
    ),
    (
        "msgraph-event-delete",
        GRAPH,
        GRAPH_CLIENT,
        "await graph_client.me.events.by_event_id(value).delete()",
        True,
        ["destructive"],
        False,
    ),
    (
        "msgraph-event-patch",
        GRAPH,
        GRAPH_CLIENT,
        "await graph_client.me.events.by_event_id(value).patch(Event(subject='Moved'))",
        True,
        ["write"],
        False,
    ),
    # O365: a message or event a factory makes new, then sent or saved, is created.
    (
        "o365-new-message-send",
        O365,
        O365_ACCOUNT,
        'message = account.new_message()\nmessage.to.add("team@example.com")\n'
        "message.body = value\nreturn message.send()",
        False,
        ["network_write"],
        True,
    ),
    (
        "o365-new-event-save",
        O365,
        O365_ACCOUNT,
        "schedule = account.schedule()\ncalendar = schedule.get_default_calendar()\n"
        "event = calendar.new_event()\nevent.subject = value\nreturn event.save()",
        False,
        ["network_write"],
        True,
    ),
    (
        "o365-mailbox-get-messages",
        O365,
        O365_ACCOUNT,
        "mailbox = account.mailbox()\nreturn list(mailbox.get_messages(limit=5, query=value))",
        False,
        [],
        False,
    ),
    # simple_salesforce: SObject handles.
    (
        "salesforce-create",
        SF,
        SF_CLIENT,
        'return sf.Contact.create({"LastName": value})',
        False,
        ["network_write"],
        True,
    ),
    (
        "salesforce-update",
        SF,
        SF_CLIENT,
        'return sf.Contact.update("003A0001", {"LastName": value})',
        False,
        ["write"],
        False,
    ),
    (
        "salesforce-upsert-external-id",
        SF,
        SF_CLIENT,
        'return sf.Contact.upsert(f"Customer_Id__c/{value}", {"LastName": "Lee"})',
        False,
        ["write"],
        False,
    ),
    (
        "salesforce-delete",
        SF,
        SF_CLIENT,
        "return sf.Contact.delete(value)",
        False,
        ["destructive"],
        False,
    ),
    (
        "salesforce-query",
        SF,
        SF_CLIENT,
        "return sf.query(f\"SELECT Id FROM Contact WHERE LastName = '{value}'\")",
        False,
        [],
        False,
    ),
    (
        "salesforce-get",
        SF,
        SF_CLIENT,
        "return sf.Contact.get(value)",
        False,
        [],
        False,
    ),
    # ShopifyAPI resources: a resource built and saved is created.
    (
        "shopify-product-save",
        "import shopify",
        "",
        "product = shopify.Product()\nproduct.title = value\nreturn product.save()",
        False,
        ["network_write"],
        True,
    ),
    (
        "shopify-product-find",
        "import shopify",
        "",
        "return shopify.Product.find(value)",
        False,
        [],
        False,
    ),
    # Twilio and SendGrid.
    (
        "twilio-messages-create",
        TWILIO,
        TWILIO_CLIENT,
        'return client.messages.create(to="+15550100", from_="+15550199", body=value).sid',
        False,
        ["message"],
        True,
    ),
    (
        "twilio-messages-list",
        TWILIO,
        TWILIO_CLIENT,
        "return [m.body for m in client.messages.list(to=value, limit=20)]",
        False,
        [],
        False,
    ),
    (
        "twilio-message-fetch",
        TWILIO,
        TWILIO_CLIENT,
        "return client.messages(value).fetch().body",
        False,
        [],
        False,
    ),
    (
        "sendgrid-send",
        "from sendgrid import SendGridAPIClient\nfrom sendgrid.helpers.mail import Mail",
        "",
        'mail = Mail(from_email="a@example.com", to_emails="b@example.com", subject="Hi",'
        " html_content=value)\n"
        'return SendGridAPIClient("key").send(mail).status_code',
        False,
        ["message"],
        True,
    ),
    (
        "sendgrid-client-mail-send-post",
        "import sendgrid",
        'sg = sendgrid.SendGridAPIClient(api_key="key")',
        'body = {"content": [{"type": "text/plain", "value": value}]}\n'
        "return sg.client.mail.send.post(request_body=body).status_code",
        False,
        ["message"],
        True,
    ),
    # Stripe: module style and StripeClient; a keyword or an options key both count.
    (
        "stripe-module-keyword-key",
        "import stripe",
        "",
        "return stripe.PaymentIntent.create(\n"
        '    amount=500, currency="eur", customer=value, idempotency_key=f"intent-{value}"\n'
        ").id",
        False,
        ["payment"],
        False,
    ),
    (
        "stripe-module-keyless",
        "import stripe",
        "",
        'return stripe.Charge.create(amount=500, currency="eur", source=value).id',
        False,
        ["payment"],
        True,
    ),
    (
        "stripe-client-options-key",
        "from stripe import StripeClient",
        STRIPE_CLIENT,
        "return client.v1.customers.create(\n"
        '    params={"email": value}, options={"idempotency_key": f"signup-{value}"}\n'
        ").id",
        False,
        ["payment"],
        False,
    ),
    (
        "stripe-client-keyless",
        "from stripe import StripeClient",
        STRIPE_CLIENT,
        'return client.v1.customers.create(params={"email": value}).id',
        False,
        ["payment"],
        True,
    ),
    (
        "stripe-client-list",
        "from stripe import StripeClient",
        STRIPE_CLIENT,
        'return list(client.v1.customers.list(params={"email": value}))',
        False,
        [],
        False,
    ),
    (
        "stripe-module-retrieve",
        "import stripe",
        "",
        "return stripe.Customer.retrieve(value)",
        False,
        [],
        False,
    ),
    # caldav: saving or adding an event creates one; deleting removes; searching reads.
    (
        "caldav-save-event",
        CALDAV,
        CALDAV_CLIENT,
        "return calendar.save_event(dtstart=start, dtend=end, summary=value).url",
        False,
        ["network_write"],
        True,
    ),
    (
        "caldav-add-event",
        CALDAV,
        CALDAV_CLIENT,
        "return calendar.add_event(value).url",
        False,
        ["network_write"],
        True,
    ),
    (
        "caldav-event-delete",
        CALDAV,
        CALDAV_CLIENT,
        "event = calendar.event_by_uid(value)\nevent.delete()",
        False,
        ["destructive"],
        False,
    ),
    (
        "caldav-search",
        CALDAV,
        CALDAV_CLIENT,
        "return [e.data for e in calendar.search(event=True, summary=value)]",
        False,
        [],
        False,
    ),
    # pexpect: a spawned program or a run command is an execution.
    (
        "pexpect-spawn",
        "import pexpect",
        "",
        'child = pexpect.spawn("/bin/bash")\nchild.sendline(value)\nchild.expect("[$] ")\n'
        "return child.before",
        False,
        ["exec"],
        False,
    ),
    (
        "pexpect-run",
        "import pexpect",
        "",
        "return pexpect.run(value)",
        False,
        ["exec"],
        False,
    ),
    # PyGithub: creates on a repository or an issue it handed out; getters read.
    (
        "github-create-issue",
        GITHUB,
        GITHUB_CLIENT,
        'repo = gh.get_repo("octo/app")\nreturn repo.create_issue(title=value).number',
        False,
        ["network_write"],
        True,
    ),
    (
        "github-issue-create-comment",
        GITHUB,
        GITHUB_CLIENT,
        'issue = gh.get_repo("octo/app").get_issue(number=7)\n'
        "return issue.create_comment(value).id",
        False,
        ["network_write"],
        True,
    ),
    (
        "github-issue-edit",
        GITHUB,
        GITHUB_CLIENT,
        'issue = gh.get_repo("octo/app").get_issue(number=int(value))\nissue.edit(state="closed")',
        False,
        ["write"],
        False,
    ),
    (
        "github-get-issues",
        GITHUB,
        GITHUB_CLIENT,
        'repo = gh.get_repo(value)\nreturn [i.title for i in repo.get_issues(state="open")]',
        False,
        [],
        False,
    ),
    (
        "github-get-contents",
        GITHUB,
        GITHUB_CLIENT,
        'return gh.get_repo("octo/app").get_contents(value).decoded_content',
        False,
        [],
        False,
    ),
    (
        "github-delete-file",
        GITHUB,
        GITHUB_CLIENT,
        'repo = gh.get_repo("octo/app")\nfound = repo.get_contents(value)\n'
        'repo.delete_file(found.path, "remove", found.sha)',
        False,
        ["destructive"],
        False,
    ),
    # notion-client: appending blocks adds them again on a retry; a page update sets fields.
    (
        "notion-pages-create",
        NOTION,
        NOTION_CLIENT,
        'parent = {"database_id": "db-1"}\n'
        'return notion.pages.create(parent=parent, properties={"Name": value})["id"]',
        False,
        ["network_write"],
        True,
    ),
    (
        "notion-blocks-children-append-async",
        "from notion_client import AsyncClient",
        'notion = AsyncClient(auth="secret")',
        'await notion.blocks.children.append(block_id="b-1", children=[{"paragraph": value}])',
        True,
        ["network_write"],
        True,
    ),
    (
        "notion-pages-update",
        NOTION,
        NOTION_CLIENT,
        "notion.pages.update(page_id=value, archived=True)",
        False,
        ["write"],
        False,
    ),
    (
        "notion-databases-query",
        NOTION,
        NOTION_CLIENT,
        'return notion.databases.query(database_id=value)["results"]',
        False,
        [],
        False,
    ),
    (
        "notion-search",
        NOTION,
        NOTION_CLIENT,
        'return notion.search(query=value)["results"]',
        False,
        [],
        False,
    ),
    # Telegram: python-telegram-bot and Telethon sends are messages.
    (
        "telegram-bot-send-message",
        "from telegram import Bot",
        'bot = Bot(token="123:abc")',
        "await bot.send_message(chat_id=42, text=value)",
        True,
        ["message"],
        True,
    ),
    (
        "telegram-bot-delete-message",
        "from telegram import Bot",
        'bot = Bot(token="123:abc")',
        "await bot.delete_message(chat_id=42, message_id=int(value))",
        True,
        ["destructive"],
        False,
    ),
    (
        "telegram-bot-get-chat",
        "from telegram import Bot",
        'bot = Bot(token="123:abc")',
        "return await bot.get_chat(chat_id=value)",
        True,
        [],
        False,
    ),
    (
        "telethon-send-message",
        "from telethon import TelegramClient",
        'tg = TelegramClient("assistant", 1001, "api-hash")',
        'await tg.send_message("me", value)',
        True,
        ["message"],
        True,
    ),
    (
        "telethon-get-messages",
        "from telethon import TelegramClient",
        'tg = TelegramClient("assistant", 1001, "api-hash")',
        "return [m.text for m in await tg.get_messages(value, limit=10)]",
        True,
        [],
        False,
    ),
    (
        "telebot-send-message",
        "import telebot",
        'bot = telebot.TeleBot("123:abc")',
        "bot.send_message(42, value)",
        False,
        ["message"],
        True,
    ),
    (
        "telebot-async-send-photo",
        "from telebot.async_telebot import AsyncTeleBot",
        'bot = AsyncTeleBot("123:abc")',
        "await bot.send_photo(42, value)",
        True,
        ["message"],
        True,
    ),
    # kubernetes: a create is refused for a name already taken; deletes, patches, exec.
    (
        "kubernetes-create-namespaced-pod",
        K8S,
        K8S_API,
        "pod = client.V1Pod(metadata=client.V1ObjectMeta(name=value))\n"
        'return core.create_namespaced_pod(namespace="default", body=pod).metadata.name',
        False,
        ["network_write"],
        False,
    ),
    (
        "kubernetes-list-namespaced-pod",
        K8S,
        K8S_API,
        "return [p.metadata.name for p in core.list_namespaced_pod(namespace=value).items]",
        False,
        [],
        False,
    ),
    (
        "kubernetes-read-pod-log",
        K8S,
        K8S_API,
        'return core.read_namespaced_pod_log(name=value, namespace="default")',
        False,
        [],
        False,
    ),
    (
        "kubernetes-delete-namespaced-pod",
        K8S,
        K8S_API,
        'core.delete_namespaced_pod(name=value, namespace="default")',
        False,
        ["destructive"],
        False,
    ),
    (
        "kubernetes-patch-deployment",
        K8S,
        "apps = client.AppsV1Api()",
        "apps.patch_namespaced_deployment(\n"
        '    name=value, namespace="default", body={"spec": {"replicas": 2}}\n'
        ")",
        False,
        ["write"],
        False,
    ),
    (
        "kubernetes-stream-exec",
        K8S + "\nfrom kubernetes.stream import stream",
        K8S_API,
        'command = ["/bin/sh", "-c", value]\n'
        'return stream(core.connect_get_namespaced_pod_exec, "web-0", "default",'
        " command=command, stdout=True)",
        False,
        ["exec"],
        False,
    ),
    # boto3 client style.
    (
        "boto3-s3-put-object",
        S3,
        S3_CLIENT,
        's3.put_object(Bucket="reports", Key=value, Body=b"...")',
        False,
        ["write"],
        False,
    ),
    (
        "boto3-s3-upload-file",
        S3,
        S3_CLIENT,
        's3.upload_file(value, "reports", "latest.csv")',
        False,
        ["write"],
        False,
    ),
    (
        "boto3-s3-get-object",
        S3,
        S3_CLIENT,
        'return s3.get_object(Bucket="reports", Key=value)["Body"].read()',
        False,
        [],
        False,
    ),
    (
        "boto3-s3-delete-object",
        S3,
        S3_CLIENT,
        's3.delete_object(Bucket="reports", Key=value)',
        False,
        ["destructive"],
        False,
    ),
    (
        "boto3-sqs-send-message",
        S3,
        'sqs = boto3.client("sqs")',
        'return sqs.send_message(QueueUrl=QUEUE, MessageBody=value)["MessageId"]',
        False,
        ["message"],
        True,
    ),
    (
        "boto3-sqs-send-message-deduplicated",
        S3,
        'sqs = boto3.client("sqs")',
        "return sqs.send_message(\n"
        '    QueueUrl=QUEUE, MessageBody=value, MessageGroupId="g", MessageDeduplicationId=ref\n'
        ')["MessageId"]',
        False,
        ["message"],
        False,
    ),
    # atlassian-python-api: object-first method names (`issue_update` updates an issue).
    (
        "atlassian-jira-issue-create",
        "from atlassian import Jira",
        'jira = Jira(url="https://jira.example", token="t")',
        'return jira.issue_create(fields={"project": {"key": "OPS"}, "summary": value})',
        False,
        ["network_write"],
        True,
    ),
    (
        "atlassian-jira-issue-update",
        "from atlassian import Jira",
        'jira = Jira(url="https://jira.example", token="t")',
        'jira.issue_update("OPS-1", fields={"summary": value})',
        False,
        ["write"],
        False,
    ),
    (
        "atlassian-jira-issue-add-comment",
        "from atlassian import Jira",
        'jira = Jira(url="https://jira.example", token="t")',
        'jira.issue_add_comment("OPS-1", value)',
        False,
        ["network_write"],
        True,
    ),
    (
        "atlassian-jira-issue-exists",
        "from atlassian import Jira",
        'jira = Jira(url="https://jira.example", token="t")',
        "return jira.issue_exists(value)",
        False,
        [],
        False,
    ),
    (
        "atlassian-confluence-create-page",
        "from atlassian import Confluence",
        'confluence = Confluence(url="https://wiki.example", token="t")',
        'return confluence.create_page(space="OPS", title=value, body="<p>Notes</p>")',
        False,
        ["network_write"],
        True,
    ),
    (
        "atlassian-confluence-get-page",
        "from atlassian import Confluence",
        'confluence = Confluence(url="https://wiki.example", token="t")',
        'return confluence.get_page_by_title(space="OPS", title=value)',
        False,
        [],
        False,
    ),
    # SQL through DB-API drivers, asyncpg and SQLAlchemy: the statement decides; text no
    # reader can know may write. The application's own database takes no idempotency key.
    (
        "asyncpg-insert",
        "import asyncpg",
        "",
        'conn = await asyncpg.connect("postgresql://db/app")\n'
        'await conn.execute("INSERT INTO notes (body) VALUES ($1)", value)',
        True,
        ["write"],
        False,
    ),
    (
        "asyncpg-fetch",
        "import asyncpg",
        "",
        'conn = await asyncpg.connect("postgresql://db/app")\n'
        'return await conn.fetch("SELECT body FROM notes WHERE body LIKE $1", value)',
        True,
        [],
        False,
    ),
    (
        "psycopg-update",
        "import psycopg",
        "",
        'with psycopg.connect("postgresql://db/app") as conn, conn.cursor() as cur:\n'
        '    cur.execute("UPDATE users SET name = %s WHERE id = 1", (value,))',
        False,
        ["write"],
        False,
    ),
    (
        "psycopg2-select",
        "import psycopg2",
        "",
        'conn = psycopg2.connect("dbname=app")\ncur = conn.cursor()\n'
        'cur.execute("SELECT * FROM users WHERE name = %s", (value,))\nreturn cur.fetchall()',
        False,
        [],
        False,
    ),
    (
        "sqlalchemy-text-ddl",
        "from sqlalchemy import create_engine, text",
        'engine = create_engine("postgresql://db/app")',
        "with engine.begin() as conn:\n"
        '    conn.execute(text("ALTER TABLE notes ADD COLUMN " + value + " text"))',
        False,
        ["write"],
        False,
    ),
    (
        "sqlalchemy-text-schema-set-up",
        "from sqlalchemy import create_engine, text",
        'engine = create_engine("postgresql://db/app")',
        "with engine.begin() as conn:\n"
        '    conn.execute(text("CREATE TABLE IF NOT EXISTS notes (body text)"))',
        False,
        [],
        False,
    ),
    (
        "sqlalchemy-text-of-the-model",
        "from sqlalchemy import create_engine, text",
        'engine = create_engine("postgresql://db/app")',
        "with engine.connect() as conn:\n    return conn.execute(text(value)).fetchall()",
        False,
        ["write"],
        False,
    ),
    # processes and files
    ("os-system", "import os", "", "return os.system(value)", False, ["exec"], False),
    (
        "asyncio-subprocess-exec",
        "import asyncio",
        "",
        'proc = await asyncio.create_subprocess_exec("python", "-c", value)\n'
        "return await proc.wait()",
        True,
        ["exec"],
        False,
    ),
    (
        "subprocess-literal-git-log",
        "import subprocess",
        "",
        'return subprocess.run(["git", "log", "-n", "5"], cwd=value, capture_output=True).stdout',
        False,
        [],
        False,
    ),
    # Python's own eval runs code, whatever globals it is given; `ast.literal_eval` does not.
    (
        "builtin-eval",
        "import math",
        "",
        'return str(eval(value.replace("^", "**"), {"__builtins__": {}}, {"sqrt": math.sqrt}))',
        False,
        ["exec"],
        False,
    ),
    ("ast-literal-eval", "import ast", "", "return ast.literal_eval(value)", False, [], False),
    ("shutil-rmtree", "import shutil", "", "shutil.rmtree(value)", False, ["destructive"], False),
    ("os-remove", "import os", "", "os.remove(value)", False, ["destructive"], False),
    ("shutil-copy", "import shutil", "", 'shutil.copy(value, "backup/")', False, ["write"], False),
    # Objects a client hands out, directly or through others: a verb that adds creates.
    (
        "trello-list-add-card",
        "from trello import TrelloClient",
        'trello = TrelloClient(api_key="k", token="t")',
        'board = trello.get_board("b-1")\ntodo = board.list_lists()[0]\n'
        "return todo.add_card(value).id",
        False,
        ["network_write"],
        True,
    ),
    (
        "gcs-blob-upload",
        "from google.cloud import storage",
        "gcs = storage.Client()",
        'bucket = gcs.bucket("reports")\nblob = bucket.blob(f"{value}.txt")\n'
        "blob.upload_from_string(value)",
        False,
        ["write"],
        False,
    ),
    (
        "firestore-collection-add",
        "from google.cloud import firestore",
        "db = firestore.Client()",
        'return db.collection("notes").add({"body": value})',
        False,
        ["network_write"],
        True,
    ),
    (
        "firestore-document-set",
        "from google.cloud import firestore",
        "db = firestore.Client()",
        'db.collection("notes").document(value).set({"body": value})',
        False,
        ["write"],
        False,
    ),
    (
        "firestore-document-get",
        "from google.cloud import firestore",
        "db = firestore.Client()",
        'return db.collection("notes").document(value).get().to_dict()',
        False,
        [],
        False,
    ),
    # tempfile: a file left behind is a local write; a scratch file removed on close is none.
    (
        "tempfile-named-kept",
        "import tempfile",
        "",
        'with tempfile.NamedTemporaryFile(mode="wb", suffix=".mp3", delete=False) as out:\n'
        "    out.write(value.encode())\nreturn out.name",
        False,
        ["write"],
        False,
    ),
    (
        "tempfile-named-scratch",
        "import tempfile",
        "",
        'with tempfile.NamedTemporaryFile(suffix=".mp3") as out:\n'
        "    out.write(value.encode())\n    return convert(out.name)",
        False,
        [],
        False,
    ),
    (
        "tempfile-mkstemp",
        "import os\nimport tempfile",
        "",
        'handle, path = tempfile.mkstemp(suffix=".wav")\nos.write(handle, value.encode())\n'
        "return path",
        False,
        ["write"],
        False,
    ),
]


@pytest.mark.parametrize(
    ("imports", "prelude", "body", "is_async", "kinds", "keyless"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_documented_sdk_calls(
    scan_files: ScanFiles,
    imports: str,
    prelude: str,
    body: str,
    is_async: bool,
    kinds: list[str],
    keyless: bool,
) -> None:
    found, codes = kinds_and_codes(
        scan_files, tool_module(imports, prelude, body, is_async=is_async)
    )
    assert found == kinds
    assert ("AG201" in codes) is keyless
    assert ("AG101" in codes) is bool(kinds)


SHOPIFY_GRAPHQL = "from shopify import GraphQL"
TAGS_ADD = '''
TAGS_ADD = """
mutation addTags($id: ID!, $tags: [String!]!) {
  tagsAdd(id: $id, tags: $tags) { node { id } }
}
"""
'''


@pytest.mark.parametrize(
    ("prelude", "body", "kinds", "keyless"),
    [
        ("", 'return GraphQL().execute("{ shop { name } }")', [], False),
        ("", 'return GraphQL().execute("query Shop { shop { name } }")', [], False),
        (
            TAGS_ADD,
            'return GraphQL().execute(TAGS_ADD, {"id": value, "tags": ["vip"]})',
            ["network_write"],
            True,
        ),
        (
            "",
            'return GraphQL().execute("mutation { productDelete(input: {id: $id}) { deletedProductId } }")',
            ["destructive"],
            False,
        ),
        (
            "",
            'return GraphQL().execute("mutation { productUpdate(input: $p) { product { id } } }")',
            ["write"],
            False,
        ),
        # the model writes the document: a write no reader can judge (low confidence, as
        # for SQL text nobody can read)
        ("", "return GraphQL().execute(value)", ["network_write"], True),
    ],
    ids=[
        "shorthand-query",
        "named-query",
        "mutation-constant",
        "mutation-delete",
        "mutation-update",
        "model-document",
    ],
)
def test_graphql_documents_decide(
    scan_files: ScanFiles, prelude: str, body: str, kinds: list[str], keyless: bool
) -> None:
    found, codes = kinds_and_codes(scan_files, tool_module(SHOPIFY_GRAPHQL, prelude, body))
    assert found == kinds
    assert ("AG201" in codes) is keyless


def test_a_graphql_tool_named_for_a_query_is_still_not_read(scan_files: ScanFiles) -> None:
    """ "Query" is what GraphQL calls any document: a tool running the model's document is
    not read because its name says query, and one named to search is unknown, not read."""
    source = (
        "from llama_index.core.tools.tool_spec.base import BaseToolSpec\n"
        "from shopify import GraphQL\n\n\n"
        "class StoreToolSpec(BaseToolSpec):\n"
        '    spec_functions = ["run_graphql_query"]\n\n'
        "    def run_graphql_query(self, graphql_query: str) -> str:\n"
        '        """Run a GraphQL query against the store\'s Admin API."""\n'
        "        return GraphQL().execute(graphql_query)\n"
    )
    tool, result = only_tool(scan_files, {"store.py": source})
    assert [(e.kind, e.confidence.value) for e in tool.effects] == [("network_write", "low")]
    assert "AG101" in {f.code for f in result.findings}
    renamed = source.replace("run_graphql_query", "search_products").replace(
        "Run a GraphQL query against", "Search the products of"
    )
    tool, result = only_tool(scan_files, {"store.py": renamed})
    assert [e.kind for e in tool.effects] == ["unknown"]
    assert "AG101" not in {f.code for f in result.findings}


def test_gql_client_executes_its_document(scan_files: ScanFiles) -> None:
    imports = "from gql import Client, gql"
    prelude = "gql_client = Client(transport=transport)"
    query = 'return gql_client.execute(gql("query { issues(first: 5) { id } }"))'
    assert kinds_and_codes(scan_files, tool_module(imports, prelude, query)) == ([], [])
    mutation = (
        'doc = gql("mutation($t: String!) { createIssue(title: $t) { id } }")\n'
        'return gql_client.execute(doc, variable_values={"t": value})'
    )
    found, codes = kinds_and_codes(scan_files, tool_module(imports, prelude, mutation))
    assert found == ["network_write"] and "AG201" in codes


def test_a_project_method_named_like_a_caldav_call_is_followed(scan_files: ScanFiles) -> None:
    """A catalogue pattern such as ``*.save_event`` never hides the project's own method."""
    source = (
        "from langchain_core.tools import tool\n\n\n"
        "class Planner:\n"
        "    def __init__(self) -> None:\n"
        "        self.events: list[str] = []\n\n"
        "    def save_event(self, title: str) -> None:\n"
        "        print(title)\n\n\n"
        "planner = Planner()\n\n\n"
        "@tool\n"
        "def act(value: str) -> str:\n"
        '    """Plan."""\n'
        "    planner.save_event(value)\n"
        '    return "ok"\n'
    )
    assert kinds_and_codes(scan_files, {"agent.py": source}) == ([], [])


def test_a_tracing_span_event_is_no_calendar_event(scan_files: ScanFiles) -> None:
    imports = "from opentelemetry import trace"
    prelude = 'tracer = trace.get_tracer("assistant")'
    body = (
        'with tracer.start_as_current_span("act") as span:\n'
        '    span.add_event("tool called", {"value": value})\n'
        "    return value.upper()"
    )
    assert kinds_and_codes(scan_files, tool_module(imports, prelude, body)) == ([], [])


def test_a_gql_document_on_an_async_session_is_judged_as_graphql(scan_files: ScanFiles) -> None:
    imports = "from gql import Client, gql"
    prelude = "gql_client = Client(transport=transport)"
    body = (
        "async with gql_client as session:\n"
        '    return await session.execute(gql("query { issues(first: 5) { id } }"))'
    )
    files = tool_module(imports, prelude, body, is_async=True)
    assert kinds_and_codes(scan_files, files) == ([], [])
    files = tool_module(
        imports, prelude, body.replace("query { issues", "mutation { deleteIssue"), is_async=True
    )
    assert kinds_and_codes(scan_files, files)[0] == ["destructive"]


@pytest.mark.parametrize(
    ("body", "kinds"),
    [
        ("return [p.key for p in jira.projects()]", []),
        ("return [c.body for c in jira.comments(value)]", []),
        ("return [t['name'] for t in jira.transitions(value)]", []),
        ('jira.transition_issue(value, "Done")', ["write"]),
        ("jira.add_comment(value, 'Seen by the assistant')", ["network_write"]),
    ],
    ids=["projects", "comments", "transitions", "transition-issue", "add-comment"],
)
def test_jira_noun_getters_read(scan_files: ScanFiles, body: str, kinds: list[str]) -> None:
    files = tool_module("from jira import JIRA", 'jira = JIRA("https://jira.example")', body)
    assert kinds_and_codes(scan_files, files)[0] == kinds
