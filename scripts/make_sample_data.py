#!/usr/bin/env python3
"""Generate the committed sample dataset in ``sample_data/``.

The data describes "Kestrel", a fictional team-chat SaaS product:

* ``docs.jsonl``      -- ~500 documentation chunks (doc_id, title, text);
* ``labels.tsv``      -- 320 labeled queries with graded judgments and per-query
                         fields (query_text, source, blind, split);
* ``base.trec``, ``tuned.trec``, ``tuned-256d.trec`` -- three ranked runs (top 100
                         per query) plus ``*.meta.json`` sidecars;
* ``seed_example/``   -- the SPEC.md section 2 seed example as JSON files.

The runs come from a real (if tiny) retrieval mechanism, not from random numbers.
Every text becomes a hashed, IDF-weighted bag of features (stemmed words, word
bigrams, character 3/4-grams, the chunk title counted extra) and docs are ranked by
cosine similarity to the query:

* ``base``: a general-purpose model.  Mostly words; knows everyday English synonyms
  (max -> maximum, broken -> not working) but not the product's customer jargon,
  abbreviations or misspellings; weighs headings little; each similarity carries a
  9 % seeded relative error (a less precise model).
* ``tuned``: the same plus what tuning on customer queries taught it: a synonym table
  for the product's jargon (covering 60 % of it), a speller that maps unknown words
  to the closest doc word by character trigrams, and more weight on headings.
* ``tuned-256d``: ``tuned`` squeezed into 256 dimensions by a seeded Gaussian random
  projection (of the tuned vectors written in the basis of the doc span), plus a 7 %
  relative error: close calls between similar chunks start to flip.

The constants below (PARAMS and the query-mix shares) were tuned by hand so that
the printed summary tells the intended story.  Deterministic: fixed seeds, no
network, stdlib + numpy + pandas; similarities are plain elementwise sums rather than
BLAS matrix products.  Running it twice gives byte-identical files (another platform
or numpy build could still change a last digit, e.g. through the one LAPACK
eigen-decomposition behind tuned-256d).  Usage::

    python scripts/make_sample_data.py            # writes sample_data/
    python scripts/make_sample_data.py --out DIR  # writes somewhere else
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20240611
N_QUERIES = 320
TOP_K = 100

# --------------------------------------------------------------------------------------
# Corpus content
# --------------------------------------------------------------------------------------
# Each topic becomes one chunk per generic "aspect" (overview, set up, permissions, ...)
# plus one chunk per hand-written "facet" (two chunks when a facet has two parts).
#
# Topic fields:
#   area, slug   -> doc ids "{area}-{slug}-NN"
#   title        -> article title
#   feat / Feat  -> how the docs name the feature (lower / sentence case); plural: verb agreement
#   tq           -> the phrase the docs team uses for it in queries
#   obj          -> the thing counted in limits
#   purpose      -> what the feature lets you do (infinitive clause)
#   path, button -> where it is configured in the UI
#   role, plan, endpoint, scope, event
#   limit, error, mobile, notify_when, notify_who, off_effect -> topic-specific sentences
#   cust         -> customer words for the topic -> the doc words they mean
#   general      -> sentences that may appear in any chunk of the topic
#   facets       -> (key, [doc paragraph, optional 2nd part], team queries, customer queries, also)
#   skip         -> generic aspects that do not make sense for this topic

T = []

# Features that an admin switches on and off (the others are processes or objects, whose
# "set up" and "turn off" articles read as "getting started" and "cancelling and undoing").
TOGGLES = {
    "security-2fa", "security-sso-saml", "security-scim", "security-ip-allowlist", "admin-audit-log",
    "api-webhooks", "data-retention", "data-residency", "integrations-calendar", "integrations-github",
    "integrations-zapier", "members-guests", "calls-huddles", "notifications-push", "notifications-email",
    "messaging-files",
}


def topic(**kw):
    kw.setdefault("plural", False)
    kw.setdefault("skip", [])
    kw.setdefault("toggle", f"{kw['area']}-{kw['slug']}" in TOGGLES)
    kw.setdefault("role", "Workspace Admin")
    kw.setdefault("plan", "all plans, including Free")
    kw.setdefault("scope", f"{kw['area']}:{kw['slug'].split('-')[0]}:write")
    kw.setdefault("event", f"{kw['slug'].replace('-', '_')}.updated")
    kw.setdefault("notify_who", "the Workspace Owner and all Workspace Admins")
    kw.setdefault("off_effect", "Turning it off does not delete existing data; it only stops new activity.")
    T.append(kw)


topic(
    area="billing", slug="invoices", title="Invoices", feat="invoices", Feat="Invoices",
    plural=True, tq="invoices", obj="invoice recipients",
    purpose="download, forward and customize the invoices for your subscription",
    path="Admin Console > Billing > Invoices", button="Download PDF", role="Billing Admin",
    plan="all paid plans", endpoint="GET /v2/billing/invoices", scope="billing:read",
    event="invoice.issued",
    limit="Invoices are kept for seven years. The invoice list shows the last 36 months; older invoices can be requested from support.",
    error="An invoice stays in the Pending state until the payment settles, which can take up to three business days for bank transfers.",
    mobile="you can view invoices under Settings > Billing, but downloading a PDF requires the web app.",
    notify_when="a new invoice is issued or an invoice becomes past due",
    notify_who="the billing contact and any additional billing email recipients",
    off_effect="Invoices cannot be turned off, but you can stop the automatic invoice emails; invoices stay available for download.",
    cust={"bill": "invoice", "receipt": "invoice", "statement": "invoice", "invoice": "invoice"},
    general=[
        "Invoices are issued on the first day of each billing period in the workspace billing currency.",
        "Each invoice lists the plan, the number of billed seats, credits applied and the tax amount.",
        "Invoice numbers are unique and follow the format KST-YYYY-NNNNNN.",
    ],
    facets=[
        ("details", ["Company name, billing address and VAT details printed on future invoices are edited in Admin Console > Billing > Invoice details. Invoices that were already issued cannot be edited, but a Billing Admin can ask support to reissue an invoice with corrected details within 60 days of the invoice date."],
         ["change the billing address on invoices", "reissue an invoice with corrected details"],
         ["wrong company name on receipt", "need to fix the address on my bill", "invoice still has our old address"], []),
        ("recipients", ["Invoices are emailed to the billing contact. You can add up to five additional billing email recipients, such as an accounts payable mailbox, so that your finance team receives a copy of every invoice automatically."],
         ["add billing email recipients"],
         ["send the bills to our accounting team too", "finance never gets the invoices", "cc accounts payable on every bill"], []),
        ("po-number", ["A purchase order (PO) number can be added to invoices for procurement. Enter it in Invoice details before the next billing date; it is printed on every invoice until you remove or replace it. Enterprise customers paying by bank transfer must include the PO number in the payment reference."],
         ["add a purchase order number to invoices"],
         ["procurement needs a PO on the invoice", "where do i put our po#"], []),
        ("currency", ["Kestrel bills in USD, EUR or GBP. The billing currency is set when the first paid subscription starts and cannot be switched later from the Admin Console. To move to another currency, a Billing Admin has to contact support, who will close the current subscription at the end of its term and start a new one in the new currency."],
         ["change the billing currency"],
         ["can we pay in euros instead", "billed in dollars but we are in the uk"], []),
    ],
)

topic(
    area="billing", slug="refunds", title="Refunds", feat="refunds", Feat="Refunds", plural=True,
    tq="refunds", obj="refund requests",
    purpose="get money back for charges that were made in error or for unused prepaid time",
    path="Admin Console > Billing > Payment history", button="Request refund", role="Billing Admin",
    plan="all paid plans", endpoint="POST /v2/billing/refunds", event="refund.requested",
    limit="A workspace can open up to three refund requests per billing period, and each request covers a single charge.",
    error="A refund request is rejected with REFUND_WINDOW_EXPIRED when the charge is older than 30 days; contact support for older charges.",
    mobile="you can follow the status of a refund request under Settings > Billing, but new refund requests must be made in the web app.",
    notify_when="a refund is approved, declined or paid out", notify_who="the Billing Admin who requested it",
    off_effect="A pending refund request can be withdrawn from Payment history until it has been approved.",
    cust={"money back": "refund", "reimburse": "refund", "reimbursement": "refund", "chargeback": "refund dispute", "refund": "refund"},
    general=[
        "Refunds are returned to the original payment method; they cannot be moved to another card.",
        "Once approved, refunds usually appear on your statement within 5 to 10 business days, depending on your bank.",
        "Refunded amounts are shown as credit notes in your invoice history.",
    ],
    facets=[
        ("duplicate", ["If your card was billed more than once for the same invoice, this is a duplicate charge. Duplicate charges are detected automatically and refunded within two business days, so you do not need to open a request. If the second charge is still on your statement after five business days, open a refund request and select Duplicate charge as the reason."],
         ["refund a duplicate charge"],
         ["charged twice this month", "we got billed 2 times", "double charged on my card", "two identical payments taken"], [("billing-failed-payments", "retries")]),
        ("window", ["Refund requests must be made within 30 days of the charge date. Annual plans can be refunded pro rata for unused full months when you cancel in the first 90 days; after that, annual subscriptions are non-refundable but keep working until the end of the term."],
         ["refund window for annual plans", "how long after a charge can I request a refund"],
         ["can i still get money back after a month", "cancelled yearly plan want money back", "too late for a refund?"], []),
        ("downgrade-credit", ["When you downgrade or remove seats in the middle of a billing period, Kestrel does not refund the difference to your card. Instead the unused amount is added as account credit and applied automatically to your next invoices."],
         ["credit after downgrade or removing seats"],
         ["removed users but didnt get money back", "where did my money go after downgrading"], [("billing-plan-changes", "proration")]),
    ],
)

topic(
    area="billing", slug="payment-methods", title="Payment methods", feat="payment methods",
    Feat="Payment methods", plural=True, tq="payment methods", obj="saved cards",
    purpose="choose how your subscription is paid: credit card, debit card, SEPA direct debit or bank transfer",
    path="Admin Console > Billing > Payment methods", button="Add payment method", role="Billing Admin",
    plan="all paid plans", endpoint="POST /v2/billing/payment-methods", event="payment_method.added",
    limit="You can save up to five payment methods; one of them is the default used for automatic renewals.",
    error="A card is declined with CARD_VERIFICATION_FAILED when the bank rejects the 3-D Secure check; approve the request in your banking app and try again.",
    mobile="you can see which card is the default payment method, but adding or replacing a card is only possible on the web.",
    notify_when="a card is about to expire or a payment method is removed",
    off_effect="Removing the default payment method is only possible after another method has been made the default.",
    cust={"card": "payment method card", "credit card": "payment method card", "paypal": "payment method", "cc": "credit card", "bank details": "payment method"},
    general=[
        "Kestrel accepts Visa, Mastercard and American Express cards, SEPA direct debit in the euro area, and bank transfer for annual Enterprise contracts.",
        "Card details are stored by our payment processor; Kestrel never stores full card numbers.",
    ],
    facets=[
        ("update-card", ["To update the card on file, open Payment methods, click Add payment method, enter the new card and mark it as default. The old card can then be removed. Updating the card does not trigger a charge; the new card is used at the next renewal."],
         ["update the card on file"],
         ["my card expired how do i put a new one", "change cc for our subscription", "swap credit card"], []),
        ("bank-transfer", ["Bank transfer is available for annual Enterprise contracts over 10,000 USD. Invoices paid by bank transfer are due within 30 days (net 30). Include the invoice number in the payment reference so the payment can be matched."],
         ["pay by bank transfer", "net 30 payment terms"],
         ["can we pay by wire", "pay without credit card"], []),
    ],
)

topic(
    area="billing", slug="plan-changes", title="Upgrading and downgrading", feat="plan changes",
    Feat="Plan changes", plural=True, tq="plan changes", obj="plan changes",
    purpose="upgrade to a higher plan, downgrade to a lower one or switch between monthly and annual billing",
    path="Admin Console > Billing > Plan", button="Change plan", role="Billing Admin",
    plan="all plans, including Free", endpoint="PATCH /v2/billing/subscription", event="subscription.changed",
    limit="You can change plans as often as you like, but switching from annual to monthly billing is only possible at renewal.",
    error="A downgrade is blocked with PLAN_FEATURES_IN_USE while the workspace still uses features of the higher plan, such as SAML single sign-on; turn them off first.",
    mobile="plan changes are not available in the mobile app; the app links to the web Admin Console.",
    notify_when="the plan changes or a scheduled downgrade takes effect",
    off_effect="A scheduled downgrade can be cancelled from the Plan page until the end of the current billing period.",
    cust={"upgrade": "upgrade plan", "downgrade": "downgrade plan", "switch plan": "change plan", "cheaper plan": "downgrade lower plan", "cancel subscription": "cancel plan"},
    general=[
        "Upgrades take effect immediately; downgrades take effect at the end of the current billing period.",
        "Switching to annual billing gives a 16 percent discount compared with monthly billing.",
    ],
    facets=[
        ("proration", ["When you upgrade in the middle of a billing period, you are charged a prorated amount for the rest of the period: the price difference multiplied by the share of the period that is left. The prorated charge appears as a separate line on your next invoice."],
         ["prorated charges when upgrading mid period"],
         ["why was i charged a weird amount after upgrading", "partial charge after changing plan"], []),
        ("cancel", ["To cancel a paid subscription, downgrade the workspace to the Free plan. The workspace keeps paid features until the end of the period and then moves to Free; no data is deleted, but message history older than 90 days is hidden until you upgrade again."],
         ["cancel a paid subscription"],
         ["how do i cancel our subscription", "stop paying for kestrel", "end our plan"], []),
    ],
)

topic(
    area="billing", slug="seats", title="Seats and billed members", feat="seat billing", Feat="Seat billing",
    tq="seat billing", obj="seats",
    purpose="understand which members you pay for and how adding or removing members changes your bill",
    path="Admin Console > Billing > Seats", button="Manage seats", role="Billing Admin",
    plan="the Team, Business and Enterprise plans", endpoint="GET /v2/billing/seats", event="seat.count_changed",
    limit="Team plans support up to 300 seats; Business up to 5,000; Enterprise has no fixed seat limit.",
    error="If the seat count looks too high, check for deactivated members who were reactivated and for guests counted as full members.",
    mobile="admins can see the current seat count, but seat changes are made in the web Admin Console.",
    notify_when="the seat count grows by more than 10 percent in a billing period",
    off_effect="Seats are released when a member is deactivated; the bill is adjusted at the next invoice.",
    cust={"users": "members seats", "licenses": "seats", "license": "seat", "people": "members", "headcount": "seat count"},
    general=[
        "A seat is a member who can sign in to the workspace; deactivated members do not use a seat.",
        "Single-channel guests are free; multi-channel guests are billed as regular members.",
    ],
    facets=[
        ("fair-billing", ["Kestrel uses fair billing: members who have not been active for 14 days are automatically not billed, and the unused amount is credited to the next invoice. When the member becomes active again, billing resumes for the rest of the period."],
         ["fair billing for inactive members"],
         ["do we pay for people who never log in", "inactive users still charged"], []),
        ("add-seats", ["Adding members mid-period adds seats to the subscription; the new seats are charged prorated on the next invoice. Annual plans can pre-purchase seats at the annual price, and any additional seats are billed quarterly."],
         ["adding seats in the middle of a billing period"],
         ["how much to add 5 more users", "bill went up after inviting people"], []),
    ],
)

topic(
    area="billing", slug="taxes", title="Taxes and VAT", feat="tax settings", Feat="Tax settings", plural=True,
    tq="VAT and tax IDs", obj="tax IDs",
    purpose="add a VAT number or other tax ID so that taxes are calculated correctly on invoices",
    path="Admin Console > Billing > Tax information", button="Add tax ID", role="Billing Admin",
    plan="all paid plans", endpoint="PUT /v2/billing/tax-ids", event="tax_id.updated",
    limit="A workspace can store one tax ID per country, and up to three tax IDs in total.",
    error="A VAT number is rejected with TAX_ID_INVALID when the EU VIES service cannot validate it; check the country prefix and try again later if VIES is down.",
    mobile="tax information can only be viewed and edited in the web Admin Console.",
    notify_when="a tax ID fails validation or tax rates change",
    off_effect="Removing a tax ID means tax is charged again on the next invoice.",
    cust={"vat": "vat tax", "gst": "tax", "sales tax": "tax", "tax exempt": "tax exemption", "vat number": "vat tax id"},
    general=[
        "Kestrel charges VAT in the EU and the UK, GST in Australia and sales tax in US states where it is required.",
        "Tax is calculated from the billing address and any valid tax ID on the account.",
    ],
    facets=[
        ("reverse-charge", ["Businesses in the EU that add a valid VAT number are billed under the reverse charge mechanism: no VAT is added to the invoice and the invoice carries the note 'Reverse charge'. The change applies from the next invoice; past invoices are not recalculated."],
         ["reverse charge VAT for EU businesses"],
         ["why are we paying vat we are a business", "vat charged even though we entered number"], []),
        ("exemption", ["US nonprofits and other tax-exempt organizations can upload an exemption certificate in Tax information. Support reviews the certificate within three business days; once approved, sales tax is no longer added to invoices."],
         ["upload a tax exemption certificate"],
         ["we are a nonprofit dont charge tax", "501c3 exempt from sales tax"], []),
    ],
)

topic(
    area="billing", slug="failed-payments", title="Failed payments", feat="failed payment handling",
    Feat="Failed payment handling", tq="failed payments", obj="payment retries",
    purpose="understand what happens when a renewal payment fails and how to fix it",
    path="Admin Console > Billing > Payment history", button="Retry payment", role="Billing Admin",
    plan="all paid plans", endpoint="POST /v2/billing/invoices/{id}/pay", event="payment.failed",
    limit="Kestrel retries a failed payment up to four times over 14 days before the workspace is moved to the Free plan.",
    error="The most common reasons for a failed payment are an expired card, insufficient funds and a bank blocking an international transaction.",
    mobile="a banner in the mobile app tells admins when a payment has failed; fixing it requires the web app.",
    notify_when="a payment fails and before each automatic retry",
    notify_who="the billing contact and all Billing Admins",
    off_effect="Automatic retries cannot be turned off, but you can pay the open invoice at any time with Retry payment.",
    cust={"declined": "failed payment", "payment didnt go through": "failed payment", "past due": "failed payment overdue", "card declined": "payment failed card", "suspended": "moved free plan"},
    general=[
        "While a payment is past due, the workspace keeps all paid features during a 14-day grace period.",
        "After the grace period, the workspace is moved to the Free plan until the open invoice is paid.",
    ],
    facets=[
        ("retries", ["Failed payments are retried automatically on days 1, 3, 7 and 14 after the renewal date. If you update the payment method in the meantime, the next retry uses the new card; you can also pay immediately by clicking Retry payment on the open invoice."],
         ["automatic retry schedule for failed payments"],
         ["card got declined what now", "payment didnt go through for renewal", "will you try charging again"], []),
        ("restore", ["When an overdue invoice is paid after the workspace was moved to the Free plan, the previous plan is restored within a few minutes, including message history, integrations and SSO settings. No data is lost while the workspace is on the Free plan."],
         ["restore plan after overdue invoice is paid"],
         ["workspace downgraded because card failed", "we lost our paid features after missed payment"], []),
    ],
)

topic(
    area="billing", slug="trials", title="Free trials", feat="the Business trial", Feat="The Business trial",
    tq="the Business plan free trial", obj="trials",
    purpose="try every Business plan feature for 14 days without entering a card",
    path="Admin Console > Billing > Plan", button="Start free trial", role="Workspace Owner",
    plan="workspaces on the Free plan that have not had a trial before", endpoint="POST /v2/billing/trials",
    limit="Each workspace can start one free trial. The trial lasts 14 days and covers up to 100 members.",
    error="The Start free trial button is hidden when the workspace already had a trial or has an unpaid invoice.",
    mobile="Workspace Owners can start a trial from the mobile app under Settings > Plan.",
    notify_when="the trial starts, three days before it ends and when it ends",
    off_effect="Ending a trial early moves the workspace back to the Free plan immediately.",
    cust={"trial": "trial", "demo": "trial", "try for free": "free trial", "test period": "trial", "evaluation": "trial"},
    general=[
        "No payment method is needed to start the trial, and you are never charged automatically when it ends.",
        "When the trial ends, the workspace returns to the Free plan unless a Billing Admin chose a paid plan.",
    ],
    facets=[
        ("extend", ["Trials cannot be extended from the Admin Console. If your team needs more time to evaluate, your account executive can extend the trial once by up to 14 days; ask through the contact form on the Pricing page."],
         ["extend a free trial"],
         ["need more time on our trial", "trial ran out before we finished testing"], []),
        ("after-trial", ["When the trial ends without an upgrade, Business features such as SAML single sign-on, guest accounts and the audit log are turned off. Settings are kept for 30 days, so upgrading within that time restores them."],
         ["what happens when the trial ends"],
         ["trial over what do we lose", "sso stopped after trial ended"], []),
    ],
)

topic(
    area="pricing", slug="tiers", title="Plans and pricing", feat="Kestrel plans", Feat="Kestrel plans", plural=True,
    tq="pricing plans", obj="plans",
    purpose="compare the Free, Team, Business and Enterprise plans and choose the right one",
    path="Admin Console > Billing > Plan", button="Compare plans", role="Billing Admin",
    plan="every workspace", endpoint="GET /v2/billing/plans", scope="billing:read", event="plan.viewed",
    limit="The Free plan keeps 90 days of message history and 5 GB of file storage for the whole workspace.",
    error="Prices shown in the app are before tax; the total on the checkout page includes tax for your billing address.",
    mobile="the mobile app shows your current plan; plan comparisons and upgrades open the web page.",
    notify_when="prices for your plan change, at least 30 days in advance",
    off_effect="Moving to a lower plan is covered in the article about upgrading and downgrading.",
    skip=["disable", "permissions"],
    cust={"price": "pricing plan", "cost": "pricing price", "how much": "pricing price", "tier": "plan", "tiers": "plans", "package": "plan"},
    general=[
        "The Team plan costs 8 USD per member per month and the Business plan 15 USD per member per month when billed annually.",
        "Enterprise pricing is quoted per contract and includes a dedicated account manager and a 99.95 percent uptime SLA.",
    ],
    facets=[
        ("nonprofit", ["Registered nonprofits and schools get 50 percent off the Team and Business plans. Apply from the Pricing page with proof of status; the discount is applied to the next invoice after approval and renews every year."],
         ["nonprofit and education discount"],
         ["discount for charities", "do you have student pricing", "cheaper for schools?"], []),
        ("enterprise", ["The Enterprise plan adds data residency, SCIM provisioning, custom data retention, an uptime SLA and premium support with a one-hour response time. Contact sales for a quote; Enterprise contracts are annual."],
         ["what the Enterprise plan includes"],
         ["whats in the big plan", "enterprise vs business difference"], []),
    ],
)

topic(
    area="account", slug="password-reset", title="Resetting your password", feat="password reset", Feat="Password reset",
    tq="password reset", obj="reset links",
    purpose="set a new password when you have forgotten the old one or want to change it",
    path="Preferences > Account > Password", button="Forgot password?", role="member",
    endpoint="POST /v2/users/{id}/password-reset", scope="users:write", event="user.password_reset",
    limit="You can request up to five reset links per hour. Each link works once and expires after 60 minutes.",
    error="If the reset email does not arrive, check the spam folder and make sure the address is the one you sign in with; workspaces with single sign-on do not use Kestrel passwords.",
    mobile="tap Forgot password? on the sign-in screen; the reset link opens in the app if it is installed.",
    notify_when="your password is changed, so you can react if it was not you",
    notify_who="the member whose password was changed",
    off_effect="Password sign-in can be turned off for the whole workspace when single sign-on is required.",
    skip=["plans"],
    cust={"pw": "password", "pwd": "password", "login": "sign in", "forgot": "forgotten reset", "locked out": "sign in reset password", "cant log in": "sign in password"},
    general=[
        "Passwords must be at least 12 characters long and cannot be one of your last five passwords.",
        "Changing your password signs you out of all other sessions except the current one.",
    ],
    facets=[
        ("admin-reset", ["Workspace Admins can send a password reset to a member from Admin Console > Members: select the member, open the menu and choose Send password reset. Admins never see or set the new password themselves."],
         ["admin sends a password reset to a member"],
         ["employee forgot pw can i reset it for them", "reset password for another user"], []),
        ("no-email", ["If you no longer have access to the email address on your account, you cannot reset the password yourself. Ask a Workspace Admin to change the email address on your account first, then request a new reset link."],
         ["reset password without access to email"],
         ["left my old job email cant get reset", "no access to email to reset password"], [("account-email-change", "verify")]),
    ],
)

topic(
    area="account", slug="email-change", title="Changing your email address", feat="email address changes",
    Feat="Email address changes", plural=True, tq="email address changes", obj="email changes",
    purpose="update the email address you use to sign in and receive notifications",
    path="Preferences > Account > Email", button="Change email", role="member",
    endpoint="PATCH /v2/users/{id}", scope="users:write", event="user.email_changed",
    limit="You can change your email address three times in 24 hours.",
    error="An email change fails with EMAIL_DOMAIN_NOT_ALLOWED when the workspace only allows addresses from approved domains.",
    mobile="you can change your email address in the app under Settings > Account.",
    notify_when="the email address changes; the message goes to both the old and the new address",
    notify_who="the old and the new email address",
    off_effect="Admins can stop members from changing their own email address in Admin Console > Settings > Member permissions.",
    skip=["plans", "limits"],
    cust={"username": "email address sign in", "login email": "email address", "new address": "email address", "e-mail": "email"},
    general=[
        "Your email address is also your sign-in name and where Kestrel sends notifications.",
        "In workspaces that use SCIM, email addresses are managed by your identity provider and cannot be changed in Kestrel.",
    ],
    facets=[
        ("verify", ["After you enter a new address, Kestrel sends a confirmation code to it. The change only takes effect once the code is entered; until then you keep signing in with the old address. Codes expire after 30 minutes."],
         ["verify a new email address"],
         ["never got confirmation code for new email", "new email not taking effect"], []),
        ("domain-change", ["When your company changes its email domain, a Workspace Owner can update all members at once with Admin Console > Settings > Email domains > Replace domain. Members keep their history and sign in with the new address from then on."],
         ["change the email domain for all members"],
         ["company rebranded need new emails for everyone", "bulk update user emails new domain"], []),
    ],
)

topic(
    area="account", slug="deletion", title="Deactivating and deleting accounts", feat="account deactivation",
    Feat="Account deactivation", tq="account deactivation", obj="deactivated accounts",
    purpose="remove a member's access to the workspace, or delete your own account permanently",
    path="Admin Console > Members", button="Deactivate account", role="Workspace Admin",
    endpoint="DELETE /v2/users/{id}", scope="users:write", event="user.deactivated",
    limit="Deactivated accounts can be reactivated for 30 days; after that the account can only be restored by support.",
    error="The Workspace Owner cannot be deactivated; transfer ownership to another member first.",
    mobile="admins can deactivate a member from the member's profile in the mobile app.",
    notify_when="an account is deactivated or reactivated", notify_who="the affected member and all Workspace Admins",
    off_effect="Reactivate an account from the Deactivated tab in Admin Console > Members.",
    cust={"remove user": "deactivate member", "delete user": "deactivate delete account", "offboard": "deactivate member", "close account": "delete account", "ex employee": "deactivate member"},
    general=[
        "Deactivating a member signs them out everywhere and revokes their API tokens immediately.",
        "Messages and files from deactivated members stay in channels unless they are deleted separately.",
    ],
    facets=[
        ("delete-own", ["Members can delete their own account in Preferences > Account > Delete account. Deletion is permanent after 14 days; during that time, signing in again cancels the deletion. Messages you posted stay in the workspace unless your admin also removes them."],
         ["delete your own account permanently"],
         ["i want my account gone", "how do i close my kestrel account for good"], [("privacy-gdpr", "erasure")]),
    ],
)

topic(
    area="account", slug="profile", title="Profile and display name", feat="your profile", Feat="Your profile",
    tq="member profiles", obj="custom profile fields",
    purpose="set your display name, photo, pronouns, title and time zone",
    path="Preferences > Profile", button="Edit profile", role="member",
    endpoint="PATCH /v2/users/{id}/profile", scope="users.profile:write", event="user.profile_updated",
    limit="Display names can be up to 80 characters and profile photos up to 10 MB in JPG, PNG or GIF format.",
    error="If your display name cannot be changed, your workspace may sync names from its identity provider.",
    mobile="tap your avatar, then Edit profile, to change your name, photo or status.",
    notify_when="an admin changes a member's name or profile fields",
    off_effect="Admins can lock profile fields so that members cannot edit them.",
    skip=["plans", "audit"],
    cust={"avatar": "profile photo", "picture": "profile photo", "nickname": "display name", "name": "display name", "pic": "photo"},
    general=[
        "Your display name is shown in messages and mentions; your full name is shown on your profile.",
        "Admins on the Business plan can add custom profile fields such as department or office location.",
    ],
    facets=[
        ("time-zone", ["Kestrel uses your time zone to show message times, schedule reminders and decide when Do Not Disturb starts. By default it follows your device; to fix it to a specific time zone, turn off Set automatically in Preferences > Profile > Time zone."],
         ["set your time zone"],
         ["times on messages are wrong", "clock shows wrong hour"], []),
    ],
)

topic(
    area="security", slug="2fa", title="Two-factor authentication", feat="two-factor authentication (2FA)",
    Feat="Two-factor authentication (2FA)", tq="two-factor authentication", obj="backup codes",
    purpose="protect your account with a second step at sign-in using an authenticator app or a security key",
    path="Preferences > Account > Two-factor authentication", button="Enable 2FA", role="member",
    endpoint="GET /v2/users/{id}/2fa", scope="users:read", event="user.2fa_enabled",
    limit="Each account has ten single-use backup codes; you can register up to five security keys.",
    error="If codes from your authenticator app are rejected, the time on your phone is probably wrong; turn on automatic date and time and try again.",
    mobile="the Kestrel app supports authenticator codes and security keys over NFC on supported phones.",
    notify_when="two-factor authentication is turned on or off, or backup codes are used",
    notify_who="the member and, for enforced 2FA, the Workspace Admins",
    off_effect="Turning off 2FA is not possible while your workspace requires it.",
    cust={"2 factor": "two-factor authentication", "mfa": "two-factor authentication", "otp": "authentication code", "authenticator": "authenticator app", "code": "authentication code", "two step": "two-factor"},
    general=[
        "Kestrel supports authenticator apps that use TOTP codes and FIDO2 security keys; SMS codes are not supported.",
        "Workspace Admins on the Business and Enterprise plans can require two-factor authentication for every member.",
    ],
    facets=[
        ("lost-phone", ["If you lose the phone with your authenticator app, sign in with one of your backup codes and set up 2FA again on the new device. Without backup codes, a Workspace Admin can reset two-factor authentication for you from Admin Console > Members; support cannot bypass 2FA."],
         ["recover access after losing your 2FA device"],
         ["lost my phone cant login", "new phone authenticator codes gone", "locked out mfa"], []),
        ("enforce", ["Admins can require 2FA in Admin Console > Security > Authentication. Members without 2FA get a grace period of seven days, shown as a banner, after which they must set it up before they can use Kestrel."],
         ["require two-factor authentication for all members"],
         ["force everyone to use mfa", "make 2 factor mandatory"], []),
    ],
)

topic(
    area="security", slug="sso-saml", title="SAML single sign-on", feat="SAML single sign-on (SSO)",
    Feat="SAML single sign-on (SSO)", tq="SAML single sign-on", obj="identity provider connections",
    purpose="let members sign in with your identity provider, such as Okta, Microsoft Entra ID or Google Workspace",
    path="Admin Console > Security > Single sign-on", button="Configure SAML", role="Workspace Owner",
    plan="the Business and Enterprise plans", endpoint="PUT /v2/admin/sso/saml", scope="admin:write", event="sso.config_changed",
    limit="A workspace can have one SAML connection on Business and up to five connections on Enterprise.",
    error="The error SAML_RESPONSE_INVALID usually means the certificate in Kestrel does not match the signing certificate of your identity provider, or the clock skew is more than five minutes.",
    mobile="members sign in through the identity provider's page in an in-app browser; the app keeps the session for 30 days unless your policy is shorter.",
    notify_when="the SAML configuration or signing certificate changes, and 14 days before the certificate expires",
    off_effect="When SAML is turned off, members sign in with their email and a Kestrel password; they receive a message to set one.",
    cust={"sso": "single sign-on", "okta": "identity provider", "azure ad": "identity provider entra", "single signon": "single sign-on", "idp": "identity provider", "saml": "saml"},
    general=[
        "Kestrel acts as the service provider; the entity ID and ACS URL are shown on the Single sign-on page.",
        "Test the configuration with the Test sign-in button before requiring SSO for all members.",
    ],
    facets=[
        ("certificate", ["Identity providers rotate their signing certificates. Upload the new certificate in Single sign-on > Certificates before the old one expires; Kestrel accepts both certificates during the overlap, so members are not signed out during the rotation."],
         ["rotate the SAML signing certificate"],
         ["sso cert expiring", "okta certificate renewal broke login"], []),
        ("require", ["After SAML is configured, choose whether SSO is optional or required. When it is required, password sign-in is disabled for everyone except Workspace Owners, who keep a password as a fallback in case the identity provider is unavailable."],
         ["require SSO for all members"],
         ["force everyone to login through okta", "disable passwords only sso"], []),
        ("jit", ["With just-in-time provisioning, a member account is created the first time someone signs in through the identity provider. New accounts get the default role and join the default channels; use SCIM if you also need deprovisioning."],
         ["just-in-time provisioning with SAML"],
         ["users auto created on first sso login", "new hires get account automatically"], [("security-scim", "overview")]),
    ],
)

topic(
    area="security", slug="scim", title="SCIM user provisioning", feat="SCIM provisioning", Feat="SCIM provisioning",
    tq="SCIM user provisioning", obj="provisioned members",
    purpose="create, update and deactivate member accounts automatically from your identity provider",
    path="Admin Console > Security > Provisioning", button="Generate SCIM token", role="Workspace Owner",
    plan="the Enterprise plan", endpoint="/scim/v2/Users", scope="scim", event="scim.user_provisioned",
    limit="The SCIM API accepts 600 requests per minute per workspace and up to 50,000 provisioned members.",
    error="A 409 conflict from the SCIM API means a member with the same email already exists but was not created through SCIM; link the account by email in Provisioning > Unlinked members.",
    mobile="SCIM runs between your identity provider and Kestrel, so there is nothing to set up in the mobile app.",
    notify_when="a SCIM token is about to expire or provisioning errors repeat",
    off_effect="Revoking the SCIM token stops provisioning; existing accounts are kept.",
    cust={"auto provision": "provisioning", "user sync": "scim provisioning", "deprovision": "deactivate provisioning", "okta sync": "scim provisioning", "directory sync": "scim provisioning"},
    general=[
        "Kestrel supports SCIM 2.0 for users and groups; groups are synced as user groups that can be added to channels.",
        "When a user is removed in the identity provider, SCIM deactivates the member in Kestrel within a few minutes.",
    ],
    facets=[
        ("groups", ["Groups pushed over SCIM become user groups in Kestrel. You can map a group to channels so that its members are added to those channels automatically, and removed from them when they leave the group."],
         ["map SCIM groups to channels"],
         ["add people to channels based on okta group", "sync ad groups"], []),
    ],
)

topic(
    area="security", slug="sessions", title="Sessions and sign-out", feat="session management", Feat="Session management",
    tq="session duration", obj="active sessions",
    purpose="control how long members stay signed in and sign out devices remotely",
    path="Admin Console > Security > Sessions", button="Set session duration", role="Workspace Admin",
    plan="the Business and Enterprise plans", endpoint="DELETE /v2/admin/users/{id}/sessions", scope="admin:write", event="session.revoked",
    limit="Session duration can be set from 1 hour to 90 days; the default is 30 days.",
    error="If members are signed out unexpectedly, check whether an IP allowlist or a shorter session duration was applied recently.",
    mobile="mobile sessions can have their own duration, and admins can require a device passcode.",
    notify_when="all sessions of a member are signed out by an admin",
    notify_who="the affected member",
    off_effect="Resetting session duration to the default applies at each member's next sign-in.",
    cust={"logged out": "signed out session", "kicked out": "signed out session", "stay logged in": "session duration", "timeout": "session duration", "log out everywhere": "sign out all sessions"},
    general=[
        "Members can see their own active sessions in Preferences > Account > Sessions and sign out any of them.",
        "Session changes apply to web, desktop and mobile apps.",
    ],
    facets=[
        ("stolen-device", ["If a laptop or phone is lost or stolen, a Workspace Admin should sign out all of the member's sessions from Admin Console > Members > Sessions and reset their password. Signing out also removes cached messages from the mobile app the next time the device connects."],
         ["sign out a lost or stolen device"],
         ["employee lost laptop log them out", "phone stolen remove access"], []),
    ],
)

topic(
    area="security", slug="ip-allowlist", title="IP allowlisting", feat="IP allowlisting", Feat="IP allowlisting",
    tq="IP allowlist", obj="IP ranges",
    purpose="allow access to the workspace only from your office network or VPN",
    path="Admin Console > Security > Network access", button="Add IP range", role="Workspace Owner",
    plan="the Enterprise plan", endpoint="PUT /v2/admin/network/allowlist", scope="admin:write", event="network.allowlist_changed",
    limit="You can add up to 100 IP ranges in CIDR notation, for example 203.0.113.0/24.",
    error="Members outside the allowed ranges see ACCESS_DENIED_NETWORK; if this happens at the office, check whether your public IP address changed.",
    mobile="the allowlist can be applied to mobile apps too, or mobile can be exempted so that members can read messages on cellular data.",
    notify_when="the allowlist changes or a sign-in is blocked repeatedly",
    off_effect="Removing every range turns off the allowlist and allows access from any network.",
    cust={"whitelist": "allowlist", "vpn only": "allowlist network", "block ip": "allowlist network access", "office network": "network allowlist", "ip restriction": "ip allowlist"},
    general=[
        "The allowlist applies to the web app, desktop apps and API requests made with member tokens.",
        "Workspace Owners can always sign in from the recovery address, so a wrong range cannot lock everyone out.",
    ],
    facets=[],
)

topic(
    area="admin", slug="roles", title="Roles and permissions", feat="roles and permissions", Feat="Roles and permissions",
    plural=True, tq="member roles and permissions", obj="custom roles",
    purpose="decide what each member can do, from posting messages to managing billing",
    path="Admin Console > Roles", button="Create role", role="Workspace Owner",
    plan="all plans; custom roles need the Enterprise plan", endpoint="POST /v2/admin/roles", scope="admin:write", event="role.assigned",
    limit="Enterprise workspaces can create up to 50 custom roles; each member has exactly one role.",
    error="When a member reports that an option is disabled, compare their role with the permission required for the action in the role matrix.",
    mobile="roles are assigned in the web Admin Console, but the mobile app follows the same permissions.",
    notify_when="a member's role changes", notify_who="the member and all Workspace Owners",
    off_effect="Deleting a custom role moves its members to the Member role.",
    cust={"admin rights": "admin role permissions", "make admin": "assign role admin", "access": "permissions", "rights": "permissions", "privileges": "permissions role"},
    general=[
        "Built-in roles are Workspace Owner, Workspace Admin, Billing Admin, Member and Guest.",
        "A workspace always has exactly one Primary Owner, who can transfer ownership but not leave the workspace.",
    ],
    facets=[
        ("transfer-owner", ["The Primary Owner can transfer ownership to another Workspace Owner in Admin Console > Roles > Transfer ownership. The transfer needs confirmation by email from both people and cannot be undone by the previous owner."],
         ["transfer workspace ownership"],
         ["our owner left the company how to take over", "change who owns the workspace"], []),
        ("billing-admin", ["The Billing Admin role can see invoices, change payment methods and plans, and request refunds, but cannot change workspace settings or see private channels. It is meant for finance staff."],
         ["what the Billing Admin role can do"],
         ["give finance guy access to billing only", "accountant needs invoices but not admin"], [("billing-invoices", "recipients")]),
    ],
)

topic(
    area="admin", slug="audit-log", title="Audit log", feat="the audit log", Feat="The audit log",
    tq="audit log", obj="audit log events",
    purpose="see who did what in the workspace: sign-ins, setting changes, exports and member changes",
    path="Admin Console > Security > Audit log", button="Open audit log", role="Workspace Owner",
    plan="the Business and Enterprise plans", endpoint="GET /v2/admin/audit-logs", scope="auditlogs:read", event="audit_log.exported",
    limit="Audit log events are kept for one year on Business and seven years on Enterprise.",
    error="If an expected event is missing, check the time range filter; events are shown in UTC.",
    mobile="the audit log is not available in the mobile app.",
    notify_when="an audit log export is ready to download",
    off_effect="The audit log cannot be turned off on plans that include it.",
    skip=["audit", "disable"],
    cust={"activity log": "audit log", "who did": "audit log events", "logs": "audit log", "history": "audit log events", "security log": "audit log"},
    general=[
        "Each audit log event records the actor, the action, the target, the time and the IP address.",
        "You can filter the audit log by member, action type and date range, and export the result as CSV.",
    ],
    facets=[
        ("siem", ["Stream audit log events to a SIEM such as Splunk or Datadog with the audit log streaming integration. Events are delivered in JSON within about a minute; Enterprise only."],
         ["stream audit log events to a SIEM"],
         ["send logs to splunk", "security team wants our logs in datadog"], []),
    ],
)

topic(
    area="admin", slug="workspace-settings", title="Workspace settings", feat="workspace settings", Feat="Workspace settings",
    plural=True, tq="workspace settings", obj="workspace URL changes",
    purpose="change the workspace name, URL, icon and default language",
    path="Admin Console > Settings > General", button="Edit workspace", role="Workspace Admin",
    endpoint="PATCH /v2/admin/workspace", scope="admin:write", event="workspace.updated",
    limit="The workspace URL can be changed once every 30 days; old URLs redirect for 90 days.",
    error="The URL you want may be taken by another workspace or reserved; URLs must be 3 to 40 characters long.",
    mobile="the workspace name and icon update in the mobile app the next time it syncs.",
    notify_when="the workspace name or URL changes", notify_who="every member of the workspace",
    off_effect="Workspace settings cannot be turned off; changes can be reverted by an admin.",
    skip=["disable", "plans"],
    cust={"rename": "change workspace name", "url": "workspace url", "logo": "workspace icon", "company name": "workspace name", "subdomain": "workspace url"},
    general=[
        "Workspace settings apply to every member; personal preferences override only display options.",
        "The default language sets the language of system messages and emails for new members.",
    ],
    facets=[
        ("branding", ["On the Enterprise plan you can use your own logo on the sign-in page and in emails, and set a custom accent colour. Upload the logo as SVG or PNG at least 512 pixels wide."],
         ["custom branding for the sign-in page"],
         ["put our logo on login page", "white label kestrel"], []),
    ],
)

topic(
    area="api", slug="keys", title="API keys", feat="API keys", Feat="API keys", plural=True,
    tq="API keys", obj="active API keys",
    purpose="authenticate scripts and server-side integrations against the Kestrel REST API",
    path="Admin Console > Developer > API keys", button="Create API key", role="Workspace Admin",
    endpoint="POST /v2/admin/api-keys", scope="admin:write", event="api_key.created",
    limit="A workspace can have up to 25 active API keys; each key can be limited to specific scopes.",
    error="A 401 response with INVALID_API_KEY means the key was revoked, expired or copied with extra whitespace.",
    mobile="API keys can be viewed and revoked in the mobile app, but new keys are created on the web.",
    notify_when="an API key is created, is about to expire or has not been used for 90 days",
    off_effect="Revoking a key takes effect immediately; requests with it fail with 401.",
    cust={"token": "api key", "api token": "api key", "secret": "api key", "access token": "api key", "apikey": "api key"},
    general=[
        "The full key is shown only once when it is created; store it in a secret manager.",
        "Send the key in the Authorization header as a bearer token; never put it in a URL.",
    ],
    facets=[
        ("rotate", ["Rotate API keys regularly. Create a new key with the same scopes, update your integration, then revoke the old key. Keys can be given an expiry date of up to one year, and expiring keys are listed on the API keys page 14 days in advance."],
         ["rotate an API key"],
         ["how do i regenerate my token", "key leaked on github what to do", "replace old api token"], []),
        ("scopes", ["Each API key has scopes that limit what it can do, such as messages:read, channels:write or admin:write. Give a key only the scopes the integration needs; a request outside the key's scopes fails with 403 MISSING_SCOPE."],
         ["API key scopes"],
         ["403 missing scope", "token cant post messages forbidden"], []),
    ],
)

topic(
    area="api", slug="rate-limits", title="API rate limits", feat="API rate limits", Feat="API rate limits", plural=True,
    tq="API rate limits", obj="requests per minute",
    purpose="understand how many API requests you can make and how to handle throttling",
    path="Admin Console > Developer > Usage", button="View usage", role="Workspace Admin",
    endpoint="GET /v2/admin/api-usage", scope="admin:read", event="api.rate_limited",
    limit="Most endpoints allow 100 requests per minute per API key; posting messages is limited to one message per second per channel.",
    error="When you exceed a limit, the API returns 429 Too Many Requests with a Retry-After header giving the number of seconds to wait.",
    mobile="rate limits apply to API clients only; the mobile app is not affected.",
    notify_when="an integration is throttled repeatedly for more than 10 minutes",
    off_effect="Rate limits cannot be turned off; Enterprise customers can ask for higher limits.",
    skip=["disable", "audit", "mobile"],
    cust={"throttled": "rate limit", "too many requests": "rate limit 429", "429": "rate limit 429", "quota": "rate limit", "slow down": "rate limit"},
    general=[
        "Every response includes the headers X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.",
        "Rate limits are counted per API key, so several integrations do not share one budget.",
    ],
    facets=[
        ("backoff", ["Handle 429 responses with exponential backoff: wait for the number of seconds in Retry-After, then retry, doubling the wait after each further 429. The official SDKs do this automatically for up to five retries."],
         ["retry with exponential backoff after 429"],
         ["script keeps getting 429", "getting throttled by the api", "too many requests error bulk import"], []),
        ("burst", ["Short bursts above the limit are allowed: each key has a burst allowance of 20 extra requests that refills at the normal rate. Bulk jobs should use the batch endpoints, which count as one request for up to 100 items."],
         ["burst allowance and batch endpoints"],
         ["fastest way to send many api calls", "bulk api calls limit"], []),
    ],
)

topic(
    area="api", slug="webhooks", title="Webhooks", feat="webhooks", Feat="Webhooks", plural=True,
    tq="webhooks", obj="webhook endpoints",
    purpose="receive an HTTP POST in your own service whenever something happens in Kestrel",
    path="Admin Console > Developer > Webhooks", button="Add endpoint", role="Workspace Admin",
    endpoint="POST /v2/admin/webhooks", scope="webhooks:write", event="webhook.endpoint_created",
    limit="A workspace can register up to 20 webhook endpoints, each subscribed to any number of event types.",
    error="Deliveries fail when your endpoint does not answer with a 2xx status within 10 seconds; check the delivery log for the response code.",
    mobile="webhooks are configured on the web; the mobile app shows no webhook settings.",
    notify_when="an endpoint is disabled after repeated delivery failures",
    off_effect="Disabled endpoints keep their configuration and can be re-enabled from the Webhooks page.",
    skip=["mobile"],
    cust={"callback": "webhook", "http callback": "webhook", "events push": "webhook events", "hook": "webhook", "webhook": "webhook"},
    general=[
        "Each delivery contains the event type, the event ID, a timestamp and the object that changed, as JSON.",
        "The delivery log keeps the last 30 days of attempts with request bodies and response codes.",
    ],
    facets=[
        ("signature", ["Every webhook request carries a Kestrel-Signature header: an HMAC-SHA256 of the timestamp and the raw body, signed with the endpoint's signing secret. Verify the signature and reject requests older than five minutes to prevent replay attacks."],
         ["verify the webhook signature"],
         ["how to check webhook is really from you", "hmac validation failing"], []),
        ("retries", ["Failed deliveries are retried with exponential backoff for up to 24 hours, eight attempts in total. After three days of continuous failures the endpoint is disabled and admins are notified. Use the event ID to ignore duplicate deliveries."],
         ["webhook retry policy"],
         ["webhook events missing", "getting same event twice", "endpoint got disabled"], []),
    ],
)

topic(
    area="api", slug="oauth-apps", title="OAuth apps", feat="OAuth apps", Feat="OAuth apps", plural=True,
    tq="OAuth apps", obj="installed apps",
    purpose="build apps that act on behalf of members after they approve access",
    path="Admin Console > Developer > Apps", button="Create app", role="Workspace Admin",
    endpoint="POST /oauth/token", scope="apps:write", event="app.installed",
    limit="An app can request at most 30 scopes, and access tokens expire after 12 hours; refresh tokens last 90 days.",
    error="The error invalid_redirect_uri means the redirect URL in the request does not exactly match one registered for the app.",
    mobile="members approve app access in a browser; the mobile app lists installed apps under Settings > Apps.",
    notify_when="a new app is installed or asks for additional scopes",
    off_effect="Uninstalling an app revokes all of its tokens immediately.",
    cust={"oauth": "oauth app", "bot": "app", "app approval": "app install", "client id": "oauth app", "third party app": "app"},
    general=[
        "Kestrel uses the OAuth 2.0 authorization code flow with PKCE.",
        "Admins can require approval before members install apps, in Admin Console > Apps > Approval.",
    ],
    facets=[
        ("approval", ["When app approval is on, members who try to install an app send a request instead; Workspace Admins approve or reject it in Admin Console > Apps > Requests. Approved apps can be limited to specific channels."],
         ["approve app installation requests"],
         ["user wants to install an app it says pending", "stop people adding random apps"], []),
    ],
)

topic(
    area="api", slug="errors", title="API errors", feat="API error responses", Feat="API error responses", plural=True,
    tq="API error codes", obj="error codes",
    purpose="understand the error codes the REST API returns and how to fix them",
    path="Admin Console > Developer > Usage", button="View errors", role="Workspace Admin",
    endpoint="GET /v2/admin/api-usage/errors", scope="admin:read", event="api.error",
    limit="The error log on the Usage page keeps the last 1,000 failed requests per key.",
    error="Every error response has a JSON body with code, message and request_id; include the request_id when contacting support.",
    mobile="API errors are not shown in the mobile app.",
    notify_when="the error rate of an API key goes above 10 percent for an hour",
    off_effect="Error notifications can be muted per key on the Usage page.",
    skip=["disable", "mobile", "plans", "permissions"],
    cust={"400": "error bad request", "500": "server error", "bad request": "error 400", "error code": "api error", "failing calls": "api errors"},
    general=[
        "4xx errors mean the request needs to be changed; 5xx errors are on Kestrel's side and are safe to retry.",
        "Use the request_id from the response to find a failed call in the error log.",
    ],
    facets=[
        ("pagination", ["List endpoints return at most 200 items per page. Use the next_cursor value from the response as the cursor parameter of the next request; a 400 INVALID_CURSOR error means the cursor expired after 10 minutes or was modified."],
         ["pagination with cursors"],
         ["only getting 200 results from list", "invalid cursor error paging"], []),
    ],
)

topic(
    area="data", slug="exports", title="Data exports", feat="data exports", Feat="Data exports", plural=True,
    tq="workspace data export", obj="exports",
    purpose="download messages, files and member lists from your workspace",
    path="Admin Console > Settings > Import/Export", button="Start export", role="Workspace Owner",
    endpoint="POST /v2/admin/exports", scope="exports:write", event="export.started",
    limit="One export can run at a time; download links are valid for seven days, and exports of more than 50 GB are split into parts.",
    error="An export fails with EXPORT_TOO_LARGE when it covers more than 500 GB; narrow the date range or export channels separately.",
    mobile="exports cannot be started from the mobile app, but the email with the download link opens on any device.",
    notify_when="an export is ready to download or has failed", notify_who="the Workspace Owner who started the export",
    off_effect="A running export can be cancelled from the Import/Export page.",
    cust={"backup": "export", "download all": "export data", "archive": "export", "csv": "export csv", "dump": "export data"},
    general=[
        "Exports are ZIP files with one JSON file per channel and day, plus users.json and channels.json.",
        "Public channel exports are available on every plan; exports that include private channels and direct messages need the Enterprise plan.",
    ],
    facets=[
        ("dm-export", ["Exports of private channels and direct messages are available on the Enterprise plan and must be requested by the Primary Owner. For compliance, members are told in their settings that their workspace can export their messages."],
         ["export private channels and direct messages"],
         ["can admin download my private chats", "export dms for legal case"], []),
        ("member-list", ["To export just the member list, open Admin Console > Members and click Export CSV. The file contains name, email, role, status and last active date, and it is generated immediately."],
         ["export the member list as CSV"],
         ["list of all users in excel", "download user list with last login"], []),
    ],
)

topic(
    area="data", slug="retention", title="Data retention", feat="message retention", Feat="Message retention",
    tq="message and file retention policies", obj="retention policies",
    purpose="decide how long messages and files are kept before they are deleted automatically",
    path="Admin Console > Settings > Retention", button="Add retention policy", role="Workspace Owner",
    plan="the Business and Enterprise plans", endpoint="PUT /v2/admin/retention", scope="admin:write", event="retention.policy_changed",
    limit="Retention periods can be set from 1 day to 10 years, or to keep everything forever (the default).",
    error="Deleted messages cannot be restored once the retention job has removed them, so test a policy on one channel first.",
    mobile="messages removed by retention disappear from the mobile app at its next sync.",
    notify_when="a retention policy is created or shortened",
    notify_who="all Workspace Owners and Admins, and members of affected channels",
    off_effect="Removing a policy stops future deletions; messages already deleted are not recovered.",
    cust={"auto delete": "retention delete", "how long kept": "retention", "purge": "delete retention", "keep messages": "retention messages", "storage period": "retention period"},
    general=[
        "Retention policies can apply to the whole workspace or to individual channels, and channel policies override the workspace policy.",
        "Deletions run once a day at 02:00 UTC.",
    ],
    facets=[
        ("legal-hold", ["A legal hold keeps all messages and files of selected members regardless of retention policies, for example during litigation. Legal holds are available on the Enterprise plan and can only be created by the Primary Owner."],
         ["legal hold for members"],
         ["lawyer says we must keep everything from one employee", "pause deletion for investigation"], []),
        ("free-history", ["On the Free plan, messages older than 90 days are hidden but not deleted; upgrading makes them visible again. Paid plans keep the full history unless a retention policy is set."],
         ["message history limit on the Free plan"],
         ["old messages disappeared", "cant see chats from last year"], [("pricing-tiers", "limits")]),
    ],
)

topic(
    area="data", slug="import", title="Importing from other tools", feat="data import", Feat="Data import",
    tq="data import from other chat tools", obj="imports",
    purpose="bring channels, messages and members over from another chat tool",
    path="Admin Console > Settings > Import/Export", button="Start import", role="Workspace Owner",
    endpoint="POST /v2/admin/imports", scope="imports:write", event="import.completed",
    limit="Import files can be up to 20 GB; larger migrations are handled by the migration team on Enterprise.",
    error="An import stops with IMPORT_FORMAT_UNSUPPORTED when the ZIP file is not an unmodified export from a supported tool.",
    mobile="imports run on the server; members see imported channels in the mobile app once the import is complete.",
    notify_when="an import finishes or needs members to be matched",
    notify_who="the Workspace Owner who started the import",
    off_effect="An import can be undone within 7 days, which removes every imported channel and message.",
    skip=["plans"],
    cust={"migrate": "import", "move from slack": "import", "switch from teams": "import", "bring over": "import", "migration": "import"},
    general=[
        "Supported sources are Slack, Microsoft Teams, Mattermost and CSV files in the Kestrel template format.",
        "Imported members are matched by email address; unmatched members are created as deactivated accounts.",
    ],
    facets=[
        ("mapping", ["Before the import runs, review the member mapping. Members matched by email keep their imported messages; you can map the rest by hand or leave their messages attributed to a deactivated placeholder account."],
         ["match imported members by email"],
         ["imported messages show wrong person", "users didnt match after migration"], []),
    ],
)

topic(
    area="data", slug="residency", title="Data residency", feat="data residency", Feat="Data residency",
    tq="data residency regions", obj="regions",
    purpose="choose the region where your messages and files are stored",
    path="Admin Console > Settings > Data residency", button="Request region change", role="Workspace Owner",
    plan="the Enterprise plan", endpoint="GET /v2/admin/data-residency", scope="admin:read", event="residency.migration_completed",
    limit="Available regions are the US, the EU (Frankfurt), the UK (London), Australia (Sydney) and Japan (Tokyo).",
    error="Some data, such as billing records and search logs, is always processed in the US; see the list in the residency article.",
    mobile="data residency needs no mobile setup; the apps connect to the right region automatically.",
    notify_when="a region migration is scheduled, starts and completes",
    off_effect="A workspace cannot leave data residency, but it can be migrated to another region.",
    skip=["disable", "troubleshoot"],
    cust={"where is data stored": "data residency region", "eu servers": "eu region data residency", "data location": "data residency", "hosting": "region", "server location": "region"},
    general=[
        "Data residency covers messages, files, search indexes and backups.",
        "Migrating an existing workspace to another region takes place during a scheduled maintenance window of up to four hours.",
    ],
    facets=[],
)

topic(
    area="privacy", slug="gdpr", title="GDPR and privacy requests", feat="GDPR tools", Feat="GDPR tools", plural=True,
    tq="GDPR data subject requests", obj="data subject requests",
    purpose="answer data subject requests and meet your obligations under the GDPR",
    path="Admin Console > Security > Privacy", button="New data request", role="Workspace Owner",
    endpoint="POST /v2/admin/privacy/requests", scope="admin:write", event="privacy.request_completed",
    limit="Access and erasure requests are completed within 30 days, usually within 72 hours.",
    error="Erasure is blocked while a legal hold covers the member; release the hold first.",
    mobile="privacy requests are handled by admins on the web.",
    notify_when="a data subject request is completed",
    off_effect="Privacy tools cannot be turned off.",
    skip=["disable", "mobile", "plans"],
    cust={"gdpr": "gdpr", "right to be forgotten": "erasure", "personal data": "personal data", "dpa": "data processing agreement", "privacy law": "gdpr"},
    general=[
        "For GDPR purposes, your company is the controller and Kestrel is the processor of workspace data.",
        "Kestrel's list of subprocessors is published on the Trust Center and updated 30 days before changes.",
    ],
    facets=[
        ("dpa", ["Kestrel's Data Processing Agreement (DPA) with the EU Standard Contractual Clauses is part of the terms of service. Customers who need a signed copy can sign it electronically from Admin Console > Security > Privacy > DPA."],
         ["sign the data processing agreement"],
         ["legal wants a dpa signed", "need standard contractual clauses"], []),
        ("erasure", ["To handle an erasure request, create a data request of type Erasure for the member. Kestrel deletes their profile, messages and files, and replaces their name with 'Former member' in channel history."],
         ["erasure request for a member"],
         ["ex employee wants all data deleted", "right to be forgotten request"], []),
        ("access", ["For an access request, Kestrel produces a ZIP file with the member's profile, messages, files and sign-in history. It is available to the Workspace Owner for seven days."],
         ["data access request for a member"],
         ["user asked for copy of their data", "subject access request"], [("data-exports", "overview")]),
    ],
)

topic(
    area="integrations", slug="calendar", title="Calendar integration", feat="the calendar integration", Feat="The calendar integration",
    tq="Google Calendar and Outlook integration", obj="connected calendars",
    purpose="connect Google Calendar or Outlook to show meetings, reminders and your status",
    path="Apps > Calendar", button="Connect calendar", role="member",
    endpoint="POST /v2/integrations/calendar", scope="integrations:write", event="integration.calendar_connected",
    limit="Each member can connect up to three calendars.",
    error="If events stop appearing, reconnect the calendar; Google and Microsoft revoke access when you change your password.",
    mobile="meeting reminders from the calendar integration arrive as push notifications.",
    notify_when="the calendar connection expires and needs to be renewed", notify_who="the member who connected it",
    off_effect="Disconnecting removes calendar data from Kestrel; your calendar itself is not changed.",
    cust={"gcal": "google calendar", "outlook": "outlook calendar", "meetings": "calendar events", "cal": "calendar", "schedule": "calendar"},
    general=[
        "The calendar integration sets your status to In a meeting during events and back when they end.",
        "Kestrel only reads free/busy times and event titles; it never changes your calendar.",
    ],
    facets=[
        ("status-sync", ["Automatic status sync sets your status to In a meeting with a calendar emoji while an event is running and restores your previous status afterwards. Private events show as Busy without a title."],
         ["sync status with calendar meetings"],
         ["status not changing during meetings", "show im in a meeting automatically"], []),
    ],
)

topic(
    area="integrations", slug="github", title="GitHub integration", feat="the GitHub integration", Feat="The GitHub integration",
    tq="GitHub integration", obj="subscribed repositories",
    purpose="get notifications about pull requests, issues and deployments in channels",
    path="Apps > GitHub", button="Connect GitHub", role="member",
    endpoint="POST /v2/integrations/github/subscriptions", scope="integrations:write", event="integration.github_subscribed",
    limit="A channel can subscribe to up to 50 repositories.",
    error="If notifications stop, the GitHub app may have lost access to the repository; check the installation in your GitHub organization settings.",
    mobile="GitHub notifications show in the app, and links open in the GitHub mobile app if it is installed.",
    notify_when="the GitHub connection is revoked",
    notify_who="the member who connected it and the channel",
    off_effect="Unsubscribing a channel stops new notifications; past messages stay.",
    cust={"gh": "github", "pr": "pull request", "pull requests": "pull request", "repo": "repository", "commits": "github notifications"},
    general=[
        "Subscribe a channel with /github subscribe owner/repo and choose which events to post.",
        "Links to GitHub issues and pull requests unfurl with their title, status and reviewers.",
    ],
    facets=[
        ("filters", ["Use filters to post only the events a team cares about, for example /github subscribe owner/repo pulls reviews, or limit notifications to a label with the label filter."],
         ["filter GitHub notifications by event type"],
         ["too many github messages in channel", "only want pr notifications"], []),
    ],
)

topic(
    area="integrations", slug="zapier", title="Zapier and automation", feat="the Zapier integration", Feat="The Zapier integration",
    tq="Zapier automation", obj="zaps",
    purpose="connect Kestrel to thousands of other apps without writing code",
    path="Apps > Zapier", button="Connect Zapier", role="member",
    endpoint="https://zapier.com/apps/kestrel", scope="integrations:write", event="integration.zapier_connected",
    limit="Zaps count against the normal API rate limit of the connecting member.",
    error="If a zap fails with an authentication error, reconnect the Kestrel account in Zapier.",
    mobile="zaps run in the cloud; messages they post appear in the mobile app like any other message.",
    notify_when="a zap connection is revoked",
    off_effect="Turning off a zap in Zapier stops it; nothing needs to change in Kestrel.",
    skip=["plans"],
    cust={"zap": "zapier", "no code": "zapier automation", "ifttt": "automation", "workflow": "automation", "make.com": "automation"},
    general=[
        "Triggers include new message in channel, new member and new mention; actions include post message and create channel.",
        "Workflow Builder covers simple automations inside Kestrel without Zapier.",
    ],
    facets=[
        ("forms", ["A common zap posts a message to a channel when someone submits a form in Google Forms or Typeform. Use the Post message action and pick the channel; form fields can be inserted into the message text."],
         ["post form submissions to a channel"],
         ["send google form answers to a channel", "typeform to kestrel"], []),
    ],
)

topic(
    area="mobile", slug="app", title="Mobile app", feat="the mobile app", Feat="The mobile app",
    tq="mobile app for iOS and Android", obj="devices",
    purpose="read and send messages, join calls and get notifications on iOS and Android",
    path="the App Store or Google Play", button="Install", role="member",
    endpoint="GET /v2/users/{id}/devices", scope="users:read", event="device.registered",
    limit="The app supports iOS 16 or later and Android 10 or later; you can be signed in on up to ten devices.",
    error="If the app crashes on start, update it from the store, then sign out and in again; as a last step, reinstall it.",
    mobile="most features match the desktop app, except admin settings and data exports.",
    notify_when="a new device signs in to your account", notify_who="the member",
    off_effect="Signing out of the app removes cached messages and files from the device.",
    skip=["mobile", "plans"],
    cust={"iphone": "ios mobile app", "android": "android mobile app", "phone app": "mobile app", "ipad": "ios app", "tablet": "mobile app"},
    general=[
        "The mobile app caches recent messages so you can read them offline; messages you send offline go out when you reconnect.",
        "Download the app from the App Store or Google Play and sign in with your workspace URL.",
    ],
    facets=[
        ("multiple-workspaces", ["You can sign in to several workspaces in the mobile app and switch between them from the workspace list on the left. Notifications from all workspaces arrive, and each workspace keeps its own notification settings."],
         ["use multiple workspaces in the mobile app"],
         ["switch between companies on phone", "add second workspace on iphone"], []),
    ],
)

topic(
    area="notifications", slug="push", title="Push notifications", feat="push notifications", Feat="Push notifications",
    plural=True, tq="push notifications on desktop and mobile", obj="notification schedules",
    purpose="decide which messages alert you on your desktop and phone",
    path="Preferences > Notifications", button="Notification settings", role="member",
    endpoint="PATCH /v2/users/{id}/notification-settings", scope="users:write", event="notifications.settings_changed",
    limit="You can set keyword notifications for up to 50 words, and one Do Not Disturb schedule per day of the week.",
    error="If you do not get push notifications on your phone, check that notifications are allowed for Kestrel in the phone settings and that Do Not Disturb is off.",
    mobile="the phone only receives notifications when you have been inactive on desktop for the time set in Preferences.",
    notify_when="notifications are paused by an admin for the workspace",
    off_effect="Use Do Not Disturb to pause notifications for a while instead of turning them off completely.",
    skip=["plans", "audit"],
    cust={"alerts": "notifications", "pings": "notifications", "no sound": "notification sound", "dnd": "do not disturb", "mute": "mute notifications"},
    general=[
        "By default you are notified about direct messages, mentions and keywords, but not every message in a channel.",
        "Channel notification settings override your global preferences for that channel.",
    ],
    facets=[
        ("dnd", ["Do Not Disturb pauses all notifications for a set time or on a schedule, for example outside working hours. People who message you see that notifications are paused and can choose to notify you anyway in urgent cases."],
         ["schedule Do Not Disturb"],
         ["stop pings after 6pm", "quiet hours on weekends", "mute everything at night"], []),
        ("not-arriving", ["When push notifications do not arrive on Android, battery optimization is the most common cause. Exclude Kestrel from battery optimization in Android settings, and make sure background data is allowed."],
         ["push notifications not arriving on Android"],
         ["no alerts on my samsung", "android not getting pings until i open app"], []),
    ],
)

topic(
    area="notifications", slug="email", title="Email notifications", feat="email notifications", Feat="Email notifications",
    plural=True, tq="email notifications and digests", obj="email digests",
    purpose="get an email about mentions and direct messages you missed, and weekly digests",
    path="Preferences > Notifications > Email", button="Email settings", role="member",
    endpoint="PATCH /v2/users/{id}/email-settings", scope="users:write", event="notifications.email_changed",
    limit="Missed-activity emails are sent at most once every 15 minutes, or once an hour if you choose hourly.",
    error="If emails do not arrive, ask your IT team to allow mail from notifications@kestrel.example and check the spam folder.",
    mobile="email preferences can also be changed in the app under Settings > Notifications > Email.",
    notify_when="you change your email preferences",
    notify_who="the member",
    off_effect="Security and billing emails are always sent, even when email notifications are turned off.",
    skip=["plans", "audit", "notify"],
    cust={"spam": "email notifications", "too many emails": "email notifications", "unsubscribe": "turn off email notifications", "digest": "email digest", "newsletter": "email"},
    general=[
        "Email notifications are only sent for activity you have not seen in any Kestrel app.",
        "The weekly digest summarizes the most active channels you are a member of.",
    ],
    facets=[
        ("unsubscribe", ["Every notification email has an Unsubscribe link that turns off that type of email with one click. To turn off all notification emails, set Preferences > Notifications > Email to Never."],
         ["unsubscribe from notification emails"],
         ["stop all emails from kestrel", "inbox flooded with kestrel mails"], []),
    ],
)

topic(
    area="messaging", slug="channels", title="Channels", feat="channels", Feat="Channels", plural=True,
    tq="channels", obj="channels",
    purpose="organize conversations by team, project or topic, in public or private channels",
    path="the sidebar, + > Create channel", button="Create channel", role="member",
    endpoint="POST /v2/channels", scope="channels:write", event="channel.created",
    limit="A workspace can have up to 10,000 channels, and a channel up to 10,000 members; channel names can be 80 characters long.",
    error="If you cannot create channels, your admin may have limited channel creation to certain roles.",
    mobile="tap + next to Channels to create a channel, or long-press a channel to mute, leave or archive it.",
    notify_when="you are added to or removed from a private channel", notify_who="the affected member",
    off_effect="Archiving a channel keeps its history searchable; only admins can delete a channel permanently.",
    skip=["plans"],
    cust={"group chat": "channel", "room": "channel", "rooms": "channels", "private group": "private channel", "chat room": "channel"},
    general=[
        "Public channels are visible to every member; private channels only to members who were invited.",
        "A public channel can be converted to private, but a private channel cannot be made public.",
    ],
    facets=[
        ("archive", ["Archive a channel from its settings when the project is finished. Archived channels are read-only, are removed from the sidebar and stay searchable; any channel manager can unarchive them later."],
         ["archive a channel"],
         ["get rid of old project channel but keep history", "close a channel"], []),
        ("convert-private", ["To make a public channel private, open the channel settings and choose Change to private channel. Existing members stay, the history becomes visible only to them, and the change cannot be reversed."],
         ["convert a public channel to private"],
         ["make channel secret", "hide channel from everyone"], []),
    ],
)

topic(
    area="messaging", slug="messages", title="Editing and deleting messages", feat="message editing", Feat="Message editing",
    tq="message editing", obj="edits",
    purpose="fix a typo, delete a message you sent by mistake, or reply in a thread",
    path="the message menu (the three dots next to a message)", button="Edit message", role="member",
    endpoint="PATCH /v2/messages/{id}", scope="messages:write", event="message.edited",
    limit="By default members can edit and delete their own messages at any time; admins can limit this to a time window from 1 minute to 7 days.",
    error="If Edit message is missing, the edit window set by your admin has passed.",
    mobile="long-press a message to edit, delete, copy it or reply in a thread.",
    notify_when="an admin deletes a message you posted", notify_who="the author",
    off_effect="Admins can turn off message deletion for members in Admin Console > Settings > Messages.",
    skip=["plans"],
    cust={"typo": "edit message", "unsend": "delete message", "take back": "delete message", "oops": "edit delete message", "recall": "delete message"},
    general=[
        "Edited messages show (edited); the original text is kept in the message history on Business and Enterprise plans.",
        "Deleted messages are removed for everyone, including from notifications that were not yet read.",
    ],
    facets=[
        ("threads", ["Reply in a thread to keep a side conversation out of the main channel. Threads show the reply count under the original message, and you can also send a thread reply to the channel with the Also send to channel option."],
         ["reply in a thread"],
         ["answer one message without spamming channel", "side conversation on a message"], []),
    ],
)

topic(
    area="messaging", slug="files", title="Files and storage", feat="file sharing", Feat="File sharing",
    tq="file uploads and storage", obj="files",
    purpose="share documents, images and videos in channels and direct messages",
    path="the paperclip icon in the message box", button="Upload file", role="member",
    endpoint="POST /v2/files", scope="files:write", event="file.uploaded",
    limit="Single files can be up to 1 GB. Storage is 5 GB per workspace on Free, 10 GB per member on Team and 20 GB per member on Business.",
    error="An upload fails with FILE_TYPE_BLOCKED when an admin has blocked that file type, such as executables.",
    mobile="tap the paperclip to share photos, videos or files from your phone.",
    notify_when="the workspace reaches 90 percent of its file storage",
    off_effect="Admins can turn off file uploads for the workspace or for guests only.",
    cust={"attachment": "file", "attachments": "files", "storage full": "file storage limit", "upload": "upload file", "pdf": "file"},
    general=[
        "Previews are generated for images, PDFs and common office documents.",
        "Files stay available until they are deleted or removed by a retention policy.",
    ],
    facets=[
        ("storage-full", ["When the workspace reaches its storage limit, new uploads are blocked until space is freed or the plan is upgraded. Owners can sort files by size in Admin Console > Files and delete large old files."],
         ["what happens when file storage is full"],
         ["cant upload says storage full", "out of space for attachments"], []),
    ],
)

topic(
    area="messaging", slug="search", title="Search", feat="message search", Feat="Message search",
    tq="message search", obj="saved searches",
    purpose="find messages, files and people across all channels you can see",
    path="the search bar at the top of the app", button="Search", role="member",
    endpoint="GET /v2/search", scope="search:read", event="search.performed",
    limit="Search returns up to 1,000 results per query; you can save up to 20 searches.",
    error="If recent messages do not show up in search, wait a minute: new messages are indexed within about 30 seconds.",
    mobile="search in the app supports the same filters, such as in:#channel and from:@name.",
    notify_when="a saved search finds new results, if you turned on alerts for it",
    notify_who="the member who saved the search",
    off_effect="Search cannot be turned off.",
    skip=["disable", "audit", "permissions"],
    cust={"find": "search", "lookup": "search", "cant find message": "search", "filter": "search filter", "look for": "search"},
    general=[
        "Search only shows messages from channels and conversations you have access to.",
        "Use quotes for exact phrases and a minus sign to exclude words.",
    ],
    facets=[
        ("modifiers", ["Narrow a search with modifiers: in:#channel, from:@person, has:file, has:link, before:2024-01-31 and after:2024-01-01. Modifiers can be combined, for example from:@alex in:#design has:file."],
         ["search modifiers like in: and from:"],
         ["find message from a specific person", "search only one channel", "find the file alex sent last month"], []),
    ],
)

topic(
    area="members", slug="guests", title="Guest accounts", feat="guest accounts", Feat="Guest accounts", plural=True,
    tq="guest accounts for external people", obj="guests",
    purpose="invite contractors, clients and partners to selected channels only",
    path="Admin Console > Members > Invite guests", button="Invite guests", role="Workspace Admin",
    plan="the Business and Enterprise plans", endpoint="POST /v2/admin/guests", scope="admin:write", event="guest.invited",
    limit="Each paid member allows five single-channel guests free of charge; guest accounts can be given an expiry date.",
    error="A guest invite fails with GUEST_DOMAIN_BLOCKED when the guest's email domain is not on the allowed list.",
    mobile="guests use the same mobile app and see only the channels they were invited to.",
    notify_when="a guest account is about to expire",
    notify_who="the member who invited the guest and the Workspace Admins",
    off_effect="Deactivating a guest removes their access immediately; their messages stay.",
    cust={"external": "guest", "contractor": "guest", "client": "guest", "freelancer": "guest", "outside company": "guest external"},
    general=[
        "Single-channel guests can access one channel; multi-channel guests can access several channels and are billed like members.",
        "Guests cannot see the member directory, create channels or install apps.",
    ],
    facets=[
        ("shared-channels", ["To work with another company that also uses Kestrel, use a shared channel instead of guests. Both workspaces keep their own members and settings, and each side controls who from its own team is in the channel."],
         ["shared channels with another company"],
         ["chat with our agency that also uses kestrel", "connect two workspaces"], []),
    ],
)

topic(
    area="calls", slug="huddles", title="Calls and huddles", feat="calls", Feat="Calls", plural=True,
    tq="voice and video calls", obj="call participants",
    purpose="start voice and video calls and quick audio huddles from any channel or direct message",
    path="the headphones icon in a channel", button="Start huddle", role="member",
    endpoint="POST /v2/calls", scope="calls:write", event="call.started",
    limit="Calls support up to 50 participants on Business and 15 on Team; the Free plan allows one-to-one calls only.",
    error="If others cannot hear you, check that the browser or desktop app has microphone permission and that the right input device is selected.",
    mobile="you can join calls from the app, and calls continue in the background when you switch apps.",
    notify_when="you are invited to a call",
    notify_who="invited members",
    off_effect="Admins can turn off calls for the workspace if the company uses another video tool.",
    cust={"zoom": "video call", "video chat": "video call", "meeting": "call", "screen share": "screen sharing", "mic": "microphone"},
    general=[
        "Huddles are lightweight audio calls that members can drop in and out of without scheduling.",
        "Screen sharing is available on the desktop and web apps.",
    ],
    facets=[
        ("recording", ["Calls can be recorded on the Business and Enterprise plans when an admin allows it. Everyone in the call sees a recording indicator, and the recording with a transcript is posted to the channel when the call ends."],
         ["record a call"],
         ["can we record meetings", "get transcript of huddle"], []),
    ],
)

# Short names customers use for each topic that are also the docs' words.
SHORT = {
    "billing-invoices": ["invoice", "invoices"], "billing-refunds": ["refund", "refunds"],
    "billing-payment-methods": ["payment method", "card", "credit card"],
    "billing-plan-changes": ["upgrade", "downgrade", "plan change"],
    "billing-seats": ["seats", "billed members", "seat billing"], "billing-taxes": ["vat", "tax id", "tax"],
    "billing-failed-payments": ["failed payment", "payment failed"], "billing-trials": ["free trial", "trial"],
    "pricing-tiers": ["plans", "pricing"],
    "account-password-reset": ["password reset", "reset password", "forgot password"],
    "account-email-change": ["change email", "email address"],
    "account-deletion": ["deactivate account", "delete account", "deactivation"],
    "account-profile": ["profile", "display name", "profile photo"],
    "security-2fa": ["2fa", "two-factor", "two-factor authentication"],
    "security-sso-saml": ["sso", "saml", "single sign-on"], "security-scim": ["scim", "provisioning"],
    "security-sessions": ["sessions", "session duration", "sign out"],
    "security-ip-allowlist": ["ip allowlist", "allowlist", "ip ranges"],
    "admin-roles": ["roles", "permissions", "custom roles"], "admin-audit-log": ["audit log"],
    "admin-workspace-settings": ["workspace name", "workspace url", "workspace icon"],
    "api-keys": ["api key", "api keys"], "api-rate-limits": ["rate limit", "rate limits", "429"],
    "api-webhooks": ["webhook", "webhooks"], "api-oauth-apps": ["oauth app", "oauth"],
    "api-errors": ["api error", "api errors", "error codes"], "data-exports": ["export", "data export"],
    "data-retention": ["retention", "retention policy"], "data-import": ["import", "data import"],
    "data-residency": ["data residency", "region"], "privacy-gdpr": ["gdpr", "data subject request"],
    "integrations-calendar": ["calendar", "google calendar", "outlook"],
    "integrations-github": ["github", "github integration"], "integrations-zapier": ["zapier"],
    "mobile-app": ["mobile app", "ios app", "android app"],
    "notifications-push": ["push notifications", "notifications", "do not disturb"],
    "notifications-email": ["email notifications", "digest"],
    "messaging-channels": ["channel", "channels", "private channel"],
    "messaging-messages": ["edit message", "delete message"],
    "messaging-files": ["files", "file upload", "storage"], "messaging-search": ["search", "message search"],
    "members-guests": ["guest", "guests", "guest accounts"], "calls-huddles": ["calls", "huddle", "video call"],
}

# How customers name each topic in their own words (used by templated customer queries;
# the tuned model's synonym table maps them back to the SHORT names).
CUST_NOUNS = {
    "billing-invoices": ["bill", "bills", "receipt", "receipts"],
    "billing-refunds": ["money back", "reimbursement", "chargeback"],
    "billing-payment-methods": ["cc", "bank details", "paypal"],
    "billing-plan-changes": ["subscription", "plan switch", "cheaper plan"],
    "billing-seats": ["licenses", "users", "user count"],
    "billing-taxes": ["vat number", "sales tax", "gst"],
    "billing-failed-payments": ["declined card", "past due", "overdue payment"],
    "billing-trials": ["demo", "test period", "evaluation"],
    "pricing-tiers": ["price", "tiers", "cost"],
    "account-password-reset": ["pw reset", "forgotten pw", "login password"],
    "account-email-change": ["login email", "e-mail", "username"],
    "account-deletion": ["user removal", "offboarding", "ex employee account"],
    "account-profile": ["avatar", "nickname", "profile pic"],
    "security-2fa": ["mfa", "2 factor", "authenticator", "otp"],
    "security-sso-saml": ["okta login", "azure ad", "idp", "single signon"],
    "security-scim": ["user sync", "directory sync", "auto provisioning"],
    "security-sessions": ["auto logout", "timeout", "stay logged in"],
    "security-ip-allowlist": ["whitelist", "ip restriction", "vpn only"],
    "admin-roles": ["admin rights", "access rights", "privileges"],
    "admin-audit-log": ["activity log", "security log", "logs"],
    "admin-workspace-settings": ["company name", "subdomain", "logo"],
    "api-keys": ["token", "api token", "secret", "access token"],
    "api-rate-limits": ["throttling", "too many requests", "api quota"],
    "api-webhooks": ["callbacks", "hooks", "event push"],
    "api-oauth-apps": ["bots", "third party apps", "client id"],
    "api-errors": ["400", "500 errors", "failing calls"],
    "data-exports": ["backup", "archive", "dump"],
    "data-retention": ["auto delete", "purge", "message expiry"],
    "data-import": ["migration", "slack import", "teams migration"],
    "data-residency": ["eu servers", "data location", "hosting region"],
    "privacy-gdpr": ["right to be forgotten", "personal data", "dsar"],
    "integrations-calendar": ["gcal", "outlook cal", "meetings"],
    "integrations-github": ["gh", "pull requests", "repo notifications"],
    "integrations-zapier": ["zaps", "no code automation", "ifttt"],
    "mobile-app": ["iphone app", "phone app", "ipad"],
    "notifications-push": ["alerts", "pings", "dnd"],
    "notifications-email": ["emails", "digest emails", "kestrel emails"],
    "messaging-channels": ["rooms", "group chats", "private group"],
    "messaging-messages": ["typo", "unsend", "sent message"],
    "messaging-files": ["attachments", "uploads", "pdfs"],
    "messaging-search": ["find", "lookup", "search bar"],
    "members-guests": ["contractors", "external users", "clients"],
    "calls-huddles": ["video chat", "meetings", "screen share"],
}

# Customer phrasings in the hand-written facet queries -> the docs' words for them.
FACET_SYNONYMS = {
    "accounting": "accounts payable finance", "euros": "eur currency", "dollars": "usd currency",
    "uk": "gbp currency", "po": "purchase order", "fix": "edit reissue", "old address": "billing address",
    "twice": "duplicate charge", "2 times": "duplicate charge", "double": "duplicate", "identical": "duplicate",
    "charged": "charge", "billed": "charge billing", "after a month": "30 days window", "yearly": "annual",
    "too late": "refund window", "removed users": "remove seats credit", "downgrading": "downgrade credit",
    "expired": "expire update card", "swap": "update", "wire": "bank transfer", "without credit card": "bank transfer",
    "weird amount": "prorated", "partial charge": "prorated", "stop paying": "cancel downgrade free",
    "never log in": "inactive fair billing", "inviting": "adding members seats", "went up": "prorated seats",
    "nonprofit": "exemption certificate", "501c3": "tax exempt", "business": "reverse charge",
    "didnt go through": "failed payment", "try charging again": "retry", "lost": "lose",
    "paid features": "restore plan", "missed payment": "overdue invoice", "more time": "extend",
    "ran out": "ends", "trial over": "trial ends", "charities": "nonprofits", "student": "education",
    "schools": "education", "big plan": "enterprise", "another user": "member admin", "employee": "member",
    "old job email": "access email address", "confirmation code": "verify code", "rebranded": "email domain",
    "bulk": "all members", "gone": "delete permanently", "for good": "permanently",
    "times": "time zone", "clock": "time zone", "new phone": "device backup codes", "codes gone": "backup codes",
    "force": "require", "mandatory": "require", "cert": "certificate", "expiring": "expires",
    "renewal": "rotate certificate", "login through": "sso required", "auto created": "just-in-time provisioning",
    "new hires": "new accounts provisioning", "okta group": "groups scim", "ad groups": "groups scim",
    "laptop": "device lost stolen", "log them out": "sign out sessions", "stolen": "stolen device",
    "owner left": "transfer ownership", "take over": "ownership", "who owns": "ownership",
    "finance guy": "billing admin", "accountant": "billing admin role", "logo": "branding",
    "white label": "custom branding", "regenerate": "rotate", "leaked": "rotate revoke", "replace": "rotate",
    "forbidden": "403 scope", "cant post": "scopes", "fastest": "batch burst", "many api calls": "batch endpoints",
    "really from you": "verify signature", "same event twice": "duplicate deliveries event id",
    "got disabled": "endpoint disabled failures", "pending": "approval requests", "random apps": "app approval",
    "only getting 200": "pagination page", "paging": "pagination", "private chats": "private channels direct messages",
    "dms": "direct messages", "legal case": "compliance", "excel": "csv export", "list of all users": "member list",
    "last login": "last active", "lawyer": "legal hold", "keep everything": "legal hold",
    "pause deletion": "legal hold", "disappeared": "hidden history", "last year": "history older",
    "wrong person": "member mapping", "didnt match": "matched mapping", "copy of their data": "access request",
    "all data deleted": "erasure", "status not changing": "status sync", "show im in a meeting": "status sync",
    "too many github": "filters", "only want": "filter", "google form": "forms", "switch between companies": "multiple workspaces",
    "second workspace": "multiple workspaces", "6pm": "schedule do not disturb", "quiet hours": "do not disturb schedule",
    "weekends": "schedule", "at night": "do not disturb schedule", "samsung": "android battery",
    "until i open": "battery optimization background", "stop all emails": "unsubscribe never",
    "inbox flooded": "notification emails unsubscribe", "old project": "archive", "close a channel": "archive",
    "secret": "private", "hide channel": "private", "spamming": "thread", "side conversation": "thread",
    "out of space": "storage limit full", "specific person": "from modifier", "one channel": "in modifier",
    "alex sent": "from modifier", "agency": "shared channel another company", "connect two workspaces": "shared channels",
    "record meetings": "recording", "can we record": "recording",
}

# ----------------------------------------------------------------------------------------
# Generic aspects (doc side).  {slots} are filled from the topic.
# ----------------------------------------------------------------------------------------
ASPECTS = {
    "overview": dict(
        title="Overview",
        lead=["{Feat} lets you {purpose}.", "With {feat} you can {purpose}.", "Use {feat} to {purpose}."],
        detail=[
            "This overview explains what {feat} {is} and how {it} {works} in Kestrel, with links to the step-by-step guides.",
            "Everything related to {feat} is found under {path}.",
            "{Feat} {works} the same way in the web, desktop and mobile apps unless a guide says otherwise.",
            "Read this first if you are new to {feat}; the related articles go into the details.",
        ]),
    "setup": dict(
        title="Set up and enable",
        lead=["To set up {feat}, open {path} and click {button}.",
              "You can enable {feat} from {path}: click {button}, review the options and save.",
              "Setting up {feat} takes a few minutes. Go to {path} and select {button} to get started."],
        detail=[
            "Follow the steps to configure the options, then click Save. Changes take effect within a minute.",
            "If you do not see {button}, reload the page; new options can take a minute to appear.",
            "We recommend testing the configuration with one member before you enable it for the whole workspace.",
            "The setup assistant checks the configuration and points out any missing fields before you turn it on.",
        ],
        alt=dict(
            title="Getting started",
            lead=["To get started with {feat}, go to {path} and click {button}.",
                  "You will find {feat} under {path}; click {button} to begin.",
                  "Getting started with {feat}: open {path} and select {button}."],
            detail=[
                "Follow the steps on screen; each step explains what will happen before you confirm.",
                "Changes are saved as you go and take effect within a minute.",
                "You can come back to {path} at any time to review what was done.",
            ])),
    "permissions": dict(
        title="Permissions: who can manage it",
        lead=["Only members with the {role} role or higher have permission to manage {feat}.",
              "Managing {feat} requires the {role} role; other members do not have access to these settings.",
              "Permissions for {feat}: the {role} role is required to change the settings."],
        detail=[
            "Workspace Owners always have access. To give another member access, open Admin Console > Members, select the member and assign a role.",
            "Members without the required permission see the option as disabled, with a note naming the role they need.",
            "Custom roles can include or exclude this permission separately.",
        ]),
    "limits": dict(
        title="Limits and maximums",
        lead=["Limits for {feat}: {limit}", "{limit} These are the maximum values allowed for {feat}."],
        detail=[
            "Limits apply per workspace unless noted otherwise.",
            "If you need a higher limit, contact support or your account manager, who can raise most maximums.",
            "The current usage against each limit is shown in {path}.",
        ]),
    "troubleshoot": dict(
        title="Troubleshooting",
        lead=["If {feat} {is} not working as expected, start here. {error}",
              "Troubleshooting {feat}: {error}",
              "Common problems and errors with {feat}, and how to fix them. {error}"],
        detail=[
            "Check the Kestrel status page for incidents before changing any settings.",
            "Sign out and sign in again, or clear the app cache, to rule out stale data.",
            "If the problem continues, contact support with the request ID shown in the error message.",
        ]),
    "plans": dict(
        title="Plans and pricing",
        lead=["{Feat} {is} available on {plan}.", "Which plans include {feat}: {plan}."],
        detail=[
            "Compare plans and prices on the Pricing page or in Admin Console > Billing > Plan.",
            "Workspaces on the Free plan can try paid features during a 14-day trial of the Business plan.",
            "When a workspace moves to a plan without this feature, its settings are kept for 30 days.",
        ]),
    "api": dict(
        title="Using the API",
        lead=["You can manage {feat} with the Kestrel REST API: {endpoint}.",
              "API access for {feat} is provided by the endpoint {endpoint}.",
              "Developers can work with {feat} through the REST API endpoint {endpoint}."],
        detail=[
            "API requests must be authenticated with an API key that has the {scope} scope.",
            "Responses are JSON, and list endpoints are paginated with a cursor.",
            "See the API reference for request fields, example payloads and response fields.",
        ]),
    "mobile": dict(
        title="On mobile (iOS and Android)",
        lead=["In the Kestrel mobile app for iOS and Android, {mobile}",
              "Mobile app: {mobile}"],
        detail=[
            "Make sure your phone has the latest app version from the App Store or Google Play.",
            "Some admin settings are only available in the web app, not on mobile.",
        ]),
    "audit": dict(
        title="Audit log and change history",
        lead=["Changes to {feat} are recorded in the audit log as {event} events.",
              "The audit log keeps a history of every change to {feat} with the event type {event}."],
        detail=[
            "Admins can search the audit log in Admin Console > Security > Audit log and export the change history as CSV.",
            "Each audit log entry shows who made the change, when, and from which IP address.",
        ]),
    "disable": dict(
        title="Turning it off",
        lead=["To turn off {feat}, open {path} and switch it off. {off_effect}",
              "You can disable {feat} at any time from {path}. {off_effect}"],
        detail=[
            "You can turn {feat} back on later; previous settings are kept for 30 days.",
            "Members are not notified when {feat} is turned off.",
        ],
        alt=dict(
            title="Cancelling and undoing",
            lead=["{off_effect}", "Cancelling or undoing: {off_effect}"],
            detail=[
                "If you are not sure whether a change can be undone, contact support before you make it.",
                "Support can help reverse most changes made in the last 30 days.",
            ])),
    "notify": dict(
        title="Email notifications",
        lead=["Kestrel sends an email notification when {notify_when}.",
              "Notification emails for {feat}: we email {notify_who} when {notify_when}."],
        detail=[
            "These email notifications go to {notify_who}.",
            "Members can change which emails they receive in Preferences > Notifications, but security emails cannot be turned off.",
        ]),
}
ASPECT_ORDER = list(ASPECTS)

# Sentences that can appear in any chunk (product-wide boilerplate).
GENERIC_FILLER = [
    "Changes made by admins apply to every member of the workspace.",
    "This article applies to the web app, the desktop apps for macOS and Windows, and the mobile apps.",
    "Screens in the desktop app may look slightly different, but the steps are the same.",
    "If your workspace is part of an Enterprise organization, some settings may be controlled at the organization level.",
    "Need more help? Contact support from the Help menu and include your workspace URL.",
    "Admins can find all workspace-wide settings in the Admin Console.",
    "Kestrel releases updates every two weeks; see the changelog for what changed.",
]

# ----------------------------------------------------------------------------------------
# Query templates
# ----------------------------------------------------------------------------------------
TEAM_Q = {
    "overview": ["what is {tq}", "{tq} overview", "how {tq} works"],
    "setup": ["how to set up {tq}", "enable {tq}", "configure {tq}"],
    "permissions": ["who can manage {tq}", "role required to manage {tq}", "permissions for {tq}"],
    "limits": ["{tq} limits", "limits for {tq}"],
    "troubleshoot": ["troubleshooting {tq}", "{tq} not working"],
    "plans": ["which plans include {tq}", "plan availability of {tq}"],
    "api": ["{tq} REST API endpoint", "manage {tq} with the API"],
    "mobile": ["{tq} in the mobile app", "{tq} on iOS and Android"],
    "audit": ["audit log events for {tq}", "{tq} changes in the audit log"],
    "disable": ["turn off {tq}", "disable {tq}"],
    "notify": ["email notifications about {tq}", "{tq} notification emails"],
}
# Customer phrasings per aspect: (using the docs' words, using customers' own words).
CUST_Q = {
    "overview": (["{c} overview", "what is {c}", "{c} how it works"],
                 ["{c} explained", "what does {c} do", "{c} basics"]),
    "setup": (["set up {c}", "enable {c}", "{c} setup", "configure {c}"],
              ["turn on {c}", "{c} cfg", "start using {c}", "where do i switch on {c}"]),
    "permissions": (["{c} permissions", "{c} role required", "who can manage {c}", "{c} access"],
                    ["{c} greyed out", "{c} admin only?", "not allowed to touch {c}"]),
    "limits": (["limit on {c}", "maximum number of {c}", "{c} limit"],
               ["max {c}", "cap on {c}", "how many {c} allowed"]),
    "troubleshoot": (["{c} not working", "{c} error", "{c} problem"],
                     ["{c} broken", "{c} keeps failing", "{c} busted"]),
    "plans": (["{c} plan", "is {c} on the free plan", "{c} pricing plans"],
              ["is {c} free", "do i need to pay for {c}", "{c} which tier"]),
    "api": (["{c} api", "{c} api endpoint", "{c} rest api"],
            ["automate {c}", "{c} via script", "{c} programmatically"]),
    "mobile": (["{c} mobile app", "{c} android", "{c} on mobile"],
               ["{c} on iphone", "{c} from my phone", "{c} ipad"]),
    "audit": (["{c} audit log", "{c} change history", "who changed {c}"],
              ["who touched {c}", "track {c} edits", "{c} who did it"]),
    "disable": (["turn off {c}", "disable {c}", "remove {c}"],
                ["get rid of {c}", "stop {c}", "switch off {c}"]),
    "notify": (["{c} email notifications", "{c} emails", "{c} notification email"],
               ["{c} alerts in inbox", "stop {c} mails", "no mail about {c}"]),
}
TICKET_Q = {
    "overview": (["can someone explain how {c} works", "what is {c} and do we need it"],
                 ["not sure what {c} does for us", "whats the point of {c}"]),
    "setup": (["where is the setting to enable {c}", "trying to set up {c} but cant find the option"],
              ["how do we turn on {c} for our team", "how do we get started with {c}"]),
    "permissions": (["i get access denied when i try to change {c}", "what role do i need to manage {c}"],
                    ["{c} option is greyed out for me", "why cant i edit {c}"]),
    "limits": (["is there a limit on {c}", "how many {c} are we allowed"],
               ["is there a max number of {c}", "we hit some cap on {c}"]),
    "troubleshoot": (["getting an error with {c}", "{c} is not working for our team"],
                     ["{c} stopped working today", "{c} is broken for our whole team"]),
    "plans": (["is {c} included in our plan", "can we use {c} on the free plan"],
              ["do we have to pay extra for {c}", "is {c} free for us"]),
    "api": (["is there an api endpoint for {c}", "how do i do {c} through the api"],
            ["can we automate {c} with a script", "how to do {c} programmatically"]),
    "mobile": (["{c} on the android app", "how does {c} work in the mobile app"],
               ["how do i do {c} on my iphone", "cant find {c} on my phone"]),
    "audit": (["where can i see the history of {c} changes", "is there an audit log for {c}"],
              ["someone changed {c} and we dont know who", "need to know who touched {c}"]),
    "disable": (["how do we turn off {c}", "we want to disable {c}"],
                ["we want to get rid of {c}", "please help us switch off {c}"]),
    "notify": (["did not get any email about {c}", "who gets the {c} emails"],
               ["we keep getting mails about {c}", "{c} alerts flooding my inbox"]),
}

# Customer words for aspects -> the doc words they mean (the tuned model's synonym table
# is built from these plus the topics' `cust` tables and ABBREV).
ASPECT_SYNONYMS = {
    "explained": "overview", "even do": "overview lets", "need": "use",
    "switch on": "enable set up", "turn on": "enable set up", "cfg": "configure set up", "setup": "set up configure",
    "start using": "set up enable",
    "greyed": "disabled role", "allowed": "role permissions", "no access": "role permissions access",
    "cap": "limit", "max": "limit maximum", "how many": "limit up to",
    "broken": "troubleshooting not working", "failing": "error troubleshooting", "gives an error": "error troubleshooting",
    "free": "plan free", "pay": "plan paid", "tier": "plan", "tiers": "plans",
    "script": "api", "automate": "api", "programmatically": "api rest", "endpoint": "api endpoint",
    "iphone": "mobile app ios", "android": "mobile app android", "phone": "mobile app", "my phone": "mobile app",
    "who changed": "audit log change", "dont know who": "audit log", "track": "audit log", "touched": "change",
    "stopped working": "troubleshooting not working", "pay extra": "plan paid", "included": "plan available",
    "busted": "troubleshooting not working", "edits": "changes audit log", "who did": "audit log", "mails": "email notifications",
    "inbox": "email", "flooding": "email notifications", "ipad": "mobile ios", "point": "overview",
    "get started": "set up", "basics": "overview",
    "get rid": "turn off disable", "stop": "turn off", "switch off": "turn off disable", "remove": "turn off disable",
    "completely": "disable",
    "emails": "email notifications", "alerts": "notification email",
}

ABBREV = {
    "password": "pw", "configure": "cfg", "configuration": "config", "account": "acct",
    "authentication": "auth", "notifications": "notifs", "notification": "notif",
    "organization": "org", "subscription": "sub", "integration": "integ", "application": "app",
    "administrator": "admin", "message": "msg", "messages": "msgs", "calendar": "cal",
    "workspace": "ws", "permissions": "perms", "information": "info", "invoice": "inv",
    "invoices": "invs", "email": "mail", "settings": "setngs", "users": "usrs",
    "channel": "chan", "channels": "chans", "please": "pls", "because": "bc",
    "documents": "docs",
}

STOPWORDS = set(
    "a an the and or of to in on for with at by from is are be was were it its this that as "
    "i we you our my your me us do does did can cant how what why when where which who "
    "there their them they he she his her not no yes if then so too very just any all "
    "have has had will would should could get got even into out up about".split()
)

# ----------------------------------------------------------------------------------------
# Retrieval model parameters (tuned by hand; see the printed summary)
# ----------------------------------------------------------------------------------------
# Corpus shape: generic-aspect detail sentences, topic-wide sentences and product-wide
# filler per chunk (shared sentences make sibling chunks harder to tell apart).
DETAIL_RANGE = (1, 3)
GENERAL_RANGE = (1, 3)
P_FILLER = 0.35

# Retrieval models.  word / bigram / char: feature weights; title: extra weight of the
# chunk title; synonyms: which table ("general" English or the "domain" jargon too);
# spell: trigram similarity needed to correct an unknown query word (None: no speller);
# noise: sd of the seeded relative error on each similarity.  The sidecar "dims"
# (768 / 1536 / 256) are the simulated models' nominal sizes; features are hashed into
# one sparse HASH_DIMS space and only tuned-256d is really reduced, to dims=256.
HASH_DIMS = 1 << 15
PARAMS = dict(
    base=dict(word=1.0, bigram=0.3, char=0.25, title=1.5, stem=True, synonyms="general", syn_weight=1.0,
              spell=None, noise=0.09),
    tuned=dict(word=1.0, bigram=0.4, char=0.2, title=3.0, stem=True, synonyms="domain", syn_weight=1.0,
               spell=0.3, noise=0.0),
    tuned_256=dict(dims=256, noise=0.07),
)
SYNONYM_COVERAGE = 0.6  # share of the product-jargon entries the tuned model "learned"
SYN_MAX_DF = 8         # synonym tables only cover words found in fewer chunks than this

# Query mix.
N_FACET_TEAM = 36      # team-written queries taken from the hand-written facet lists
N_FACET_CUST = 40      # customer queries taken from the hand-written facet lists
P_ASPECT_DOC_WORDS = 0.8  # templated customer queries: share phrasing the aspect in the docs' words
P_CUSTOMER_WORD = 0.05  # templated customer queries: share naming the topic in their own words
P_TYPO_LONGEST = 0.35  # failed searches: share misspelling the longest word
P_OVERVIEW_RELEVANT = 0.4  # queries with a linked article: share where the topic overview also answers
P_THIRD_RELEVANT = 0.5   # of those set-up queries: share where the plan-availability article answers too
P_SIBLING_RELEVANT = 0.5  # set-up / turn-off / limits queries: share where a sibling article also answers

# Realistic misspellings seen in search logs; other words get a random edit.
KNOWN_TYPOS = {
    "refund": "refnd", "refunds": "refuns", "invoice": "invioce", "invoices": "invoces",
    "password": "pasword", "receipt": "reciept", "calendar": "calender", "account": "acount",
    "notifications": "notifcations", "subscription": "subscripton", "address": "adress",
    "access": "acess", "channel": "chanel", "messages": "mesages", "separate": "seperate",
    "authentication": "authentification", "webhook": "webhok", "webhooks": "webook",
    "permissions": "permisions", "retention": "retension", "export": "exprot",
    "android": "andriod", "iphone": "iphnoe", "guest": "gust", "github": "githb",
    "certificate": "certficate", "transfer": "tranfer", "schedule": "shedule",
}


# ----------------------------------------------------------------------------------------
# Corpus
# ----------------------------------------------------------------------------------------
def _slots(t):
    plural = t["plural"]
    return dict(
        feat=t["feat"], Feat=t["Feat"], tq=t["tq"], purpose=t["purpose"], path=t["path"],
        button=t["button"], role=t["role"], plan=t["plan"], endpoint=t["endpoint"],
        scope=t["scope"], event=t["event"], limit=t["limit"], error=t["error"],
        mobile=t["mobile"], notify_when=t["notify_when"], notify_who=t["notify_who"],
        off_effect=t["off_effect"], obj=t["obj"],
        **{"is": "are" if plural else "is", "works": "work" if plural else "works",
           "it": "they" if plural else "it"},
    )


def _cap(s):
    return s[0].upper() + s[1:] if s else s


def _words(s):
    return len(s.split())


def build_corpus(rng):
    """Return a list of chunk dicts: doc_id, title, text, topic index, kind, key."""
    chunks = []
    for ti, t in enumerate(T):
        slots = _slots(t)
        prefix = f"{t['area']}-{t['slug']}"
        aspects = [a for a in ASPECT_ORDER if a not in t["skip"]]
        # logical article order: overview and set up first, then facets, then the rest
        plan = [("aspect", a) for a in aspects[:2]]
        plan += [("facet", f[0]) for f in t["facets"]]
        plan += [("aspect", a) for a in aspects[2:]]
        facets = {f[0]: f for f in t["facets"]}
        for n, (kind, key) in enumerate(plan, start=1):
            general = list(t["general"])
            rng.shuffle(general)
            if kind == "aspect":
                spec = ASPECTS[key]
                if not t["toggle"] and "alt" in spec:
                    spec = spec["alt"]
                lead = spec["lead"][rng.integers(len(spec["lead"]))].format(**slots)
                n_det = int(rng.integers(DETAIL_RANGE[0], DETAIL_RANGE[1] + 1))
                det_idx = sorted(rng.choice(len(spec["detail"]), size=min(n_det, len(spec["detail"])), replace=False))
                body = [lead] + [spec["detail"][i].format(**slots) for i in det_idx]
                title = f"{t['title']}: {spec['title'].lower()}"
            else:
                f = facets[key]
                body = [f[1][0]]
                title = f"{t['title']}: {f[2][0]}"
            n_gen = int(rng.integers(GENERAL_RANGE[0], GENERAL_RANGE[1] + 1))
            body += general[:n_gen]
            if rng.random() < P_FILLER:
                body.append(GENERIC_FILLER[rng.integers(len(GENERIC_FILLER))])
            # keep paragraphs in the 40..200 word range
            extra = general[n_gen:] + GENERIC_FILLER
            k = 0
            while _words(" ".join(body)) < 40 and k < len(extra):
                if extra[k] not in body:
                    body.append(extra[k])
                k += 1
            while _words(" ".join(body)) > 200 and len(body) > 2:
                body.pop()
            text = " ".join(_cap(s) for s in body)
            chunks.append(dict(doc_id=f"{prefix}-{n:02d}", title=_cap(title), text=text,
                               topic=ti, kind=kind, key=key))
    return chunks


# ----------------------------------------------------------------------------------------
# Queries
# ----------------------------------------------------------------------------------------
def _typo(word, rng):
    if word in KNOWN_TYPOS and rng.random() < 0.7:
        return KNOWN_TYPOS[word]
    if len(word) < 4 or not word.isalpha():
        return word
    i = int(rng.integers(1, len(word) - 1))
    op = rng.choice(4, p=[0.4, 0.3, 0.1, 0.2])
    if op == 0:  # drop a letter
        return word[:i] + word[i + 1:]
    if op == 1:  # swap two letters
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if op == 2:  # double a letter
        return word[:i] + word[i] + word[i:]
    vowels = "aeiou"  # wrong vowel
    pos = [j for j in range(1, len(word)) if word[j] in vowels]
    if not pos:
        return word[:i] + word[i + 1:]
    j = pos[int(rng.integers(len(pos)))]
    return word[:j] + vowels[(vowels.index(word[j]) + 1 + int(rng.integers(4))) % 5] + word[j + 1:]


def _compress(text, rng, p_abbrev=0.75):
    """Search-box style: drop filler words, abbreviate."""
    toks = text.lower().replace("?", "").split()
    keep = [w for w in toks if w not in STOPWORDS] or toks
    out = []
    for w in keep:
        if w in ABBREV and rng.random() < p_abbrev:
            w = ABBREV[w]
        out.append(w)
    return " ".join(out)


def _misspell(text, rng):
    toks = text.split()
    cand = [i for i, w in enumerate(toks) if len(w) >= 5 and w.isalpha()]
    if not cand:
        cand = [i for i, w in enumerate(toks) if len(w) >= 4 and w.isalpha()]
    if not cand:
        return text
    # the longest word half of the time, otherwise any word
    cand.sort(key=lambda i: -len(toks[i]))
    i = cand[0] if rng.random() < P_TYPO_LONGEST else cand[int(rng.integers(len(cand)))]
    toks[i] = _typo(toks[i], rng)
    return " ".join(toks)


def _topic_word(t, rng):
    """How a customer names the topic: the docs' short name, or their own word for it."""
    own = CUST_NOUNS[f"{t['area']}-{t['slug']}"]
    if rng.random() < P_CUSTOMER_WORD:
        return own[int(rng.integers(len(own)))]
    short = SHORT[f"{t['area']}-{t['slug']}"]
    return short[int(rng.integers(len(short)))]


def build_queries(chunks, rng):
    """Return a list of query dicts (without ids): text, source, target chunk, relevant."""
    by_key = {(c["topic"], c["kind"], c["key"]): c for c in chunks}
    topic_idx = {f"{t['area']}-{t['slug']}": i for i, t in enumerate(T)}
    cands_team, cands_cust = [], []
    # 1. hand-written facet queries
    for ti, t in enumerate(T):
        for f in t["facets"]:
            target = by_key[(ti, "facet", f[0])]
            for q in f[2]:
                cands_team.append(dict(text=q, target=target, also=f[4], style="facet"))
            for q in f[3]:
                cands_cust.append(dict(text=q, target=target, also=f[4], style="facet"))
    rng.shuffle(cands_team)
    rng.shuffle(cands_cust)
    n_team, n_support, n_search, n_failed = 60, 100, 95, 65
    n_cust = n_support + n_search + n_failed
    team = cands_team[:N_FACET_TEAM]
    cust = cands_cust[:N_FACET_CUST]
    # 2. templated queries about generic aspect chunks, to fill up
    aspect_chunks = [c for c in chunks if c["kind"] == "aspect"]
    order = rng.permutation(len(aspect_chunks))
    pos = 0
    seen = {q["text"] for q in team + cust}

    def next_aspect():
        nonlocal pos
        c = aspect_chunks[order[pos % len(order)]]
        pos += 1
        return c

    while len(team) < n_team:
        c = next_aspect()
        t = T[c["topic"]]
        tmpl = TEAM_Q[c["key"]]
        text = tmpl[int(rng.integers(len(tmpl)))].format(tq=t["tq"])
        if text not in seen:
            seen.add(text)
            team.append(dict(text=text, target=c, also=[], style="aspect"))
    while len(cust) < n_cust:
        c = next_aspect()
        t = T[c["topic"]]
        cw = _topic_word(t, rng) if c["key"] != "limits" else t["obj"].lower()
        own = int(rng.random() >= P_ASPECT_DOC_WORDS)  # 0: docs' words, 1: customers' own
        tmpl = CUST_Q[c["key"]][own]
        text = tmpl[int(rng.integers(len(tmpl)))].format(c=cw)
        tmpl = TICKET_Q[c["key"]][own]
        ticket = tmpl[int(rng.integers(len(tmpl)))].format(c=cw)
        if text not in seen and ticket not in seen:
            seen.update((text, ticket))
            style = ("aspect-own" if own else "aspect-doc") + ("+cw" if cw in CUST_NOUNS[f"{t['area']}-{t['slug']}"] else "")
            cust.append(dict(text=text, ticket=ticket, target=c, also=[], style=style))
    # 3. assign customer sources and turn texts into their source's style
    rng.shuffle(cust)
    queries = []
    for q in team:
        queries.append(dict(q, source="team_written"))
    for i, q in enumerate(cust):
        if i < n_support:
            src, text = "support_ticket", q.get("ticket", q["text"])
        elif i < n_support + n_search:
            src, text = "search_log", _compress(q["text"], rng)
        else:
            src = "failed_search"
            text = _misspell(_compress(q["text"], rng, p_abbrev=0.5), rng)
        k = 0
        while text in {x["text"] for x in queries} and k < 5:
            text = _misspell(q["text"], rng)
            k += 1
        queries.append(dict(q, text=text, source=src))
    # 4. relevance: target (grade 1, sometimes 2) + linked chunks
    for q in queries:
        c = q["target"]
        rel = {c["doc_id"]: 1}
        for prefix, key in q["also"]:
            ti = topic_idx[prefix]
            other = by_key.get((ti, "facet", key)) or by_key.get((ti, "aspect", key))
            rel.setdefault(other["doc_id"], 1)
        if q["also"] and rng.random() < P_OVERVIEW_RELEVANT:
            rel.setdefault(by_key[(c["topic"], "aspect", "overview")]["doc_id"], 1)
        if c["kind"] == "aspect" and c["key"] in ("setup", "disable", "limits") and rng.random() < P_SIBLING_RELEVANT:
            sib_key = {"setup": "permissions", "disable": "setup", "limits": "plans"}[c["key"]]
            sib = by_key.get((c["topic"], "aspect", sib_key))
            if sib is not None:
                rel.setdefault(sib["doc_id"], 1)
            plans = by_key.get((c["topic"], "aspect", "plans"))
            if c["key"] == "setup" and plans is not None and rng.random() < P_THIRD_RELEVANT:
                rel.setdefault(plans["doc_id"], 1)  # "can we turn it on at all?" is also answered there
        if len(rel) > 1 and rng.random() < 0.5:
            rel[c["doc_id"]] = 2  # the best answer
        q["relevant"] = rel
    return queries


# ----------------------------------------------------------------------------------------
# Retrieval models: hashed bags of features, cosine similarity
# ----------------------------------------------------------------------------------------
_TOKEN = re.compile(r"[a-z0-9]+")
_HASH_CACHE: dict = {}


def _tokens(text):
    return _TOKEN.findall(text.lower())


def _stem(w):
    """A tiny suffix stripper: charge / charges / charged / charging -> charg."""
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            w = w[: -len(suf)]
            break
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


def _trigrams(w):
    s = "#" + w + "#"
    return {s[i:i + 3] for i in range(len(s) - 2)}


class Speller:
    """Maps a word the docs never use to the closest doc word by character trigrams."""

    def __init__(self, doc_texts, min_sim):
        vocab = sorted({w for t in doc_texts for w in _tokens(t) if w not in STOPWORDS and w.isalpha()})
        self.vocab = set(vocab)
        self.grams = [(w, _trigrams(w)) for w in vocab if len(w) >= 3]
        self.min_sim = min_sim

    def correct(self, w):
        if w in self.vocab or w in STOPWORDS or len(w) < 3 or not w.isalpha():
            return None
        g = _trigrams(w)
        best, best_sim = None, self.min_sim
        for v, gv in self.grams:
            sim = len(g & gv) / len(g | gv)
            if sim > best_sim:
                best, best_sim = v, sim
        return best


def _features(text, cfg, synonyms=None, speller=None):
    """Return {feature: raw weight} for one text under a model config."""
    toks = _tokens(text)
    extra = []
    known = set()
    if synonyms:
        low = " " + " ".join(toks) + " "
        for key, val in synonyms.items():
            if " " + key + " " in low:
                extra += [w for w in _tokens(val) if w not in STOPWORDS]
                known.update(key.split())
    if speller is not None:
        toks = [w if w in known else (speller.correct(w) or w) for w in toks]
    content = [w for w in toks if w not in STOPWORDS]
    feats: dict = {}

    def add(f, w):
        feats[f] = feats.get(f, 0.0) + w

    stem = cfg.get("stem", False)
    for w in content:
        add("w:" + (_stem(w) if stem else w), cfg["word"])
    for w in extra:
        add("w:" + (_stem(w) if stem else w), cfg["word"] * cfg.get("syn_weight", 1.0))
    for a, b in zip(content, content[1:]):
        add("b:" + a + "_" + b, cfg["bigram"])
    if cfg["char"] > 0:
        for w in content:
            s = "#" + w + "#"
            for n in (3, 4):
                for i in range(len(s) - n + 1):
                    add("c:" + s[i:i + n], cfg["char"])
    return feats


def _bucket(feature, dims):
    key = (feature, dims)
    hit = _HASH_CACHE.get(key)
    if hit is None:
        h = int.from_bytes(hashlib.md5(feature.encode("utf-8")).digest()[:8], "little")
        hit = (h % dims, 1.0 if (h >> 40) & 1 else -1.0)
        _HASH_CACHE[key] = hit
    return hit


def _vectorize(feat_list, idf, default_idf, dims, sublinear):
    out = np.zeros((len(feat_list), dims))
    for r, feats in enumerate(feat_list):
        for f in sorted(feats):
            w = feats[f]
            if sublinear:
                w = 1.0 + np.log(w) if w >= 1 else w
            b, sign = _bucket(f, dims)
            out[r, b] += sign * w * idf.get(f, default_idf)
        norm = np.sqrt((out[r] * out[r]).sum())
        if norm > 0:
            out[r] /= norm
    return out


def embed(doc_titles, doc_texts, query_texts, cfg, synonyms=None):
    speller = Speller(doc_titles + doc_texts, cfg["spell"]) if cfg.get("spell") else None
    doc_feats = []
    for title, text in zip(doc_titles, doc_texts):
        feats = _features(text, cfg)
        for f, w in _features(title, cfg).items():  # headings count extra
            feats[f] = feats.get(f, 0.0) + cfg.get("title", 1.0) * w
        doc_feats.append(feats)
    q_feats = [_features(t, cfg, synonyms, speller) for t in query_texts]
    n = len(doc_texts)
    df: dict = {}
    for feats in doc_feats:
        for f in feats:
            df[f] = df.get(f, 0) + 1
    idf = {f: float(np.log((n + 1) / (d + 1)) + 1.0) for f, d in df.items()}
    default_idf = float(np.log(n + 1) + 1.0)
    D = _vectorize(doc_feats, idf, default_idf, HASH_DIMS, sublinear=True)
    Q = _vectorize(q_feats, idf, default_idf, HASH_DIMS, sublinear=False)
    return D, Q


def truncated_scores(G, S, dims, rng):
    """Scores of the tuned embeddings squeezed into `dims` dimensions.

    The tuned vectors are first written in an orthonormal basis of the span of the doc
    vectors (from G = D D^T = U diag(lam) U^T: doc j -> sqrt(lam) * U[j], query q ->
    U^T S[q] / sqrt(lam); this changes no ranking), then randomly projected to `dims`
    dimensions with a seeded Gaussian matrix, and compared by cosine.  Distances are
    kept roughly but not exactly, so close calls between similar chunks start to flip.
    """
    lam, U = np.linalg.eigh(G)
    keep = lam > lam.max() * 1e-9
    lam, U = lam[keep], U[:, keep]
    docs = U * np.sqrt(lam)
    queries = np.zeros((S.shape[0], lam.size))
    for i in range(S.shape[0]):
        queries[i] = (U * S[i][:, None]).sum(axis=0) / np.sqrt(lam)
    R = rng.standard_normal((lam.size, dims))
    return cosine_scores(_project(docs, R), _project(queries, R))


def _project(X, R):
    """Row-normalised X @ R, without BLAS (plain sums give the same bits everywhere)."""
    out = np.zeros((X.shape[0], R.shape[1]))
    for i in range(X.shape[0]):
        out[i] = (X[i][:, None] * R).sum(axis=0)
        norm = np.sqrt((out[i] * out[i]).sum())
        if norm > 0:
            out[i] /= norm
    return out


def cosine_scores(D, Q):
    """Q @ D.T over the query's non-zero columns, without BLAS."""
    S = np.zeros((Q.shape[0], D.shape[0]))
    for i in range(Q.shape[0]):
        nz = np.flatnonzero(Q[i])
        S[i] = (D[:, nz] * Q[i, nz]).sum(axis=1)
    return S


def rank_top(S, noise, rng, k=TOP_K):
    """Perturb each similarity by a seeded relative error (sd `noise`), then return per
    query the top k as (doc indices, 6-decimal distinct scores)."""
    S = S * (1.0 + noise * rng.standard_normal(S.shape))
    S = S / max(1.0, float(S.max()))  # keep cosine-like scores within [-1, 1]; no ranking changes
    out = []
    for i in range(S.shape[0]):
        idx = np.lexsort((np.arange(S.shape[1]), -S[i]))[:k]
        scores = [round(float(S[i, j]), 6) for j in idx]
        for r in range(1, len(scores)):  # distinct at 6 decimals, strictly descending
            if scores[r] >= scores[r - 1]:
                scores[r] = round(scores[r - 1] - 1e-6, 6)
        out.append((idx, scores))
    return out


def synonym_table(kind, doc_texts, rng):
    """Customer wording -> doc words, as a model would have learned it.

    kind="general": everyday English a general-purpose model knows (max -> maximum,
    broken -> not working, charged twice -> duplicate charge); kind="domain":
    additionally the product's own customer jargon (okta login -> sso, rooms ->
    channels, pw -> password), which the tuned model learned, only partially
    (SYNONYM_COVERAGE).  Words the docs
    themselves use a lot (in SYN_MAX_DF chunks or more) get no entry.
    """
    df: dict = {}
    for text in doc_texts:
        for w in set(_tokens(text)):
            df[w] = df.get(w, 0) + 1
    table: dict = {}

    def put(k, v):
        k = " ".join(_tokens(k))
        if not k:
            return
        table[k] = (table[k] + " " + v) if k in table and v not in table[k] else v

    for k, v in ASPECT_SYNONYMS.items():
        put(k, v)
    for k, v in FACET_SYNONYMS.items():
        put(k, v)
    if kind == "domain":
        for t in T:
            name = f"{t['area']}-{t['slug']}"
            for k, v in t["cust"].items():
                put(k, v)
            for k in CUST_NOUNS[name]:
                put(k, SHORT[name][0])
        for full, short in ABBREV.items():
            put(short, full)
    keys = [k for k in sorted(table) if min(df.get(w, 0) for w in k.split()) < SYN_MAX_DF]
    keep = rng.random(len(keys)) < (SYNONYM_COVERAGE if kind == "domain" else 1.0)
    return {k: table[k] for k, ok in zip(keys, keep) if ok}


RUNS = [
    # name, model string, price per million tokens, dims
    ("base", "acme-embed-base-v2", 0.02, 768),
    ("tuned", "acme-embed-large-v2-kestrel-ft", 0.04, 1536),
    ("tuned-256d", "acme-embed-large-v2-kestrel-ft-256d", 0.04, 256),
]


def make_runs(chunks, queries):
    doc_titles = [c["title"] for c in chunks]
    doc_texts = [c["text"] for c in chunks]
    q_texts = [q["text"] for q in queries]
    pb, pt, pp = PARAMS["base"], PARAMS["tuned"], PARAMS["tuned_256"]
    syn_b = synonym_table(pb["synonyms"], doc_texts, np.random.default_rng([SEED, 3]))
    syn_t = synonym_table(pt["synonyms"], doc_texts, np.random.default_rng([SEED, 3]))
    D_b, Q_b = embed(doc_titles, doc_texts, q_texts, pb, synonyms=syn_b)
    D_t, Q_t = embed(doc_titles, doc_texts, q_texts, pt, synonyms=syn_t)
    S_t = cosine_scores(D_t, Q_t)
    S_p = truncated_scores(cosine_scores(D_t, D_t), S_t, pp["dims"], np.random.default_rng([SEED, 4]))
    runs = {
        "base": rank_top(cosine_scores(D_b, Q_b), pb["noise"], np.random.default_rng([SEED, 5])),
        "tuned": rank_top(S_t, pt["noise"], np.random.default_rng([SEED, 6])),
        "tuned-256d": rank_top(S_p, pp["noise"], np.random.default_rng([SEED, 7])),
    }
    return runs, (len(syn_b), len(syn_t))


def assign_query_fields(queries, base_run, chunks, rng):
    """Ids, blind, split and the judged non-relevant (grade 0) docs."""
    n = len(queries)
    order = rng.permutation(n)
    queries[:] = [queries[i] for i in order]
    base_run[:] = [base_run[i] for i in order]
    for i, q in enumerate(queries):
        q["qid"] = f"q{i + 1:03d}"
    blind = rng.random(n) >= 0.15
    holdout = np.zeros(n, dtype=bool)  # 30% held out for the report, 70% to tune on
    holdout[rng.choice(n, size=round(0.3 * n), replace=False)] = True
    by_topic: dict = {}
    for c in chunks:
        by_topic.setdefault(c["topic"], []).append(c["doc_id"])
    for i, q in enumerate(queries):
        q["blind"] = bool(blind[i])
        q["split"] = "holdout" if holdout[i] else "tune"
        n_neg = int(rng.integers(1, 4))
        if not q["blind"]:
            # judged after looking at a ranking: the top non-relevant results of the base run
            idx, _ = base_run[i]
            cand = [chunks[j]["doc_id"] for j in idx[:10] if chunks[j]["doc_id"] not in q["relevant"]]
            negs = cand[:n_neg]
        elif rng.random() < 0.22:
            # judged blind: a few sibling articles the judge also read
            sib = [d for d in by_topic[q["target"]["topic"]] if d not in q["relevant"]]
            negs = [sib[j] for j in sorted(rng.choice(len(sib), size=min(n_neg, len(sib)), replace=False))]
        else:
            negs = []
        q["nonrelevant"] = negs


# ----------------------------------------------------------------------------------------
# Writers
# ----------------------------------------------------------------------------------------
def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def write_all(out, chunks, queries, runs):
    _write(out / "docs.jsonl", "".join(
        json.dumps({"doc_id": c["doc_id"], "title": c["title"], "text": c["text"]}, ensure_ascii=False) + "\n"
        for c in chunks))
    lines = ["query\tdoc_id\tgrade\tquery_text\tsource\tblind\tsplit\n"]
    for q in sorted(queries, key=lambda q: q["qid"]):
        rows = sorted(q["relevant"].items(), key=lambda kv: (-kv[1], kv[0]))
        rows += [(d, 0) for d in sorted(q["nonrelevant"])]
        for doc_id, grade in rows:
            lines.append("\t".join([q["qid"], doc_id, str(grade), q["text"], q["source"],
                                    "true" if q["blind"] else "false", q["split"]]) + "\n")
    _write(out / "labels.tsv", "".join(lines))
    n_docs = len(chunks)
    for name, model, price, dims in RUNS:
        lines = []
        for q, (idx, scores) in zip(queries, runs[name]):
            for r, (j, s) in enumerate(zip(idx, scores), start=1):
                lines.append(f"{q['qid']} Q0 {chunks[j]['doc_id']} {r} {s:.6f} {name}\n")
        order = sorted(range(len(queries)), key=lambda i: queries[i]["qid"])
        per_q = len(lines) // len(queries)
        lines = [line for i in order for line in lines[i * per_q:(i + 1) * per_q]]
        _write(out / f"{name}.trec", "".join(lines))
        meta = {"model": model, "price_per_mtok": price, "dims": dims, "index_bytes": n_docs * dims * 4}
        _write(out / f"{name}.meta.json", json.dumps(meta, indent=2) + "\n")
    # SPEC.md section 2 seed example
    seed_labels = {"refund timing": ["policy-refunds", "faq-returns"],
                   "reset my password": ["acct-recovery"],
                   "enterprise sso": ["pricing-enterprise"]}
    seed_run = {"refund timing": ["policy-refunds", "faq-shipping", "faq-returns"],
                "reset my password": ["faq-login", "acct-recovery", "policy-privacy"],
                "enterprise sso": ["faq-login", "policy-refunds", "pricing-enterprise"]}
    _write(out / "seed_example" / "labels.json", json.dumps(seed_labels, indent=2) + "\n")
    _write(out / "seed_example" / "run.json", json.dumps(seed_run, indent=2) + "\n")


# ----------------------------------------------------------------------------------------
# Independent check: recall@k computed from the written files with pandas/numpy
# ----------------------------------------------------------------------------------------
def summarize(out):
    labels = pd.read_csv(out / "labels.tsv", sep="\t", dtype=str, keep_default_na=False)
    labels["grade"] = labels["grade"].astype(int)
    rel = labels[labels["grade"] >= 1].groupby("query")["doc_id"].apply(set).to_dict()
    source = labels.groupby("query")["source"].first()
    report = {}
    lines = []
    ks = (1, 5, 10, 20, 100)
    for name, *_ in RUNS:
        run = pd.read_csv(out / f"{name}.trec", sep=" ", header=None, dtype=str,
                          names=["query", "q0", "doc_id", "rank", "score", "tag"])
        run["score"] = run["score"].astype(float)
        # SPEC order: score descending, ties by doc id descending
        run = run.sort_values(["query", "score", "doc_id"], ascending=[True, False, False])
        ranked = run.groupby("query")["doc_id"].apply(list).to_dict()
        per_q = pd.DataFrame(
            {f"r@{k}": [len(set(ranked.get(q, [])[:k]) & rel[q]) / len(rel[q]) for q in sorted(rel)] for k in ks},
            index=sorted(rel))
        per_q["source"] = source.loc[per_q.index]
        report[name] = per_q
    lines.append(f"{'run':<11} {'n':>4} {'r@1':>7} {'r@5':>7} {'r@10':>7} {'r@20':>7}  missed@100")
    for name, per_q in report.items():
        m = per_q[[f"r@{k}" for k in ks]].mean()
        missed = int((per_q["r@100"] == 0).sum())
        lines.append(f"{name:<11} {len(per_q):>4} {m['r@1']:>7.4f} {m['r@5']:>7.4f} {m['r@10']:>7.4f} {m['r@20']:>7.4f}  {missed}")
    lines.append("")
    lines.append(f"{'run':<11} {'source':<15} {'n':>4} {'r@1':>7} {'r@5':>7} {'r@10':>7}")
    for name, per_q in report.items():
        groups = [(src, g) for src, g in per_q.groupby("source", sort=True)]
        groups.append(("(customer, all)", per_q[per_q["source"] != "team_written"]))
        for src, g in groups:
            lines.append(f"{name:<11} {src:<15} {len(g):>4} {g['r@1'].mean():>7.4f} {g['r@5'].mean():>7.4f} {g['r@10'].mean():>7.4f}")
    means = {name: per_q[["r@1", "r@5"]].mean() for name, per_q in report.items()}
    r5 = [m["r@5"] for m in means.values()]
    lines.append("")
    lines.append(f"tuned - base r@1: {means['tuned']['r@1'] - means['base']['r@1']:+.4f}   "
                 f"tuned-256d - base r@1: {means['tuned-256d']['r@1'] - means['base']['r@1']:+.4f}   "
                 f"r@5 spread (max - min): {max(r5) - min(r5):.4f}")
    return "\n".join(lines), report


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "sample_data"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    chunks = build_corpus(np.random.default_rng([SEED, 1]))
    queries = build_queries(chunks, np.random.default_rng([SEED, 2]))
    assert len(queries) == N_QUERIES, len(queries)
    runs, n_syn = make_runs(chunks, queries)
    base = list(runs["base"])
    # reorder queries (and every run) by the same permutation
    perm_rng = np.random.default_rng([SEED, 8])
    order_before = list(range(len(queries)))
    tagged = [dict(q, _i=i) for i, q in zip(order_before, queries)]
    assign_query_fields(tagged, base, chunks, perm_rng)
    new_order = [q["_i"] for q in tagged]
    runs = {k: [v[i] for i in new_order] for k, v in runs.items()}
    write_all(out, chunks, tagged, runs)
    text, _ = summarize(out)
    n_multi = sum(len(q["relevant"]) > 1 for q in tagged)
    n_g2 = sum(2 in q["relevant"].values() for q in tagged)
    n_neg = sum(bool(q["nonrelevant"]) for q in tagged)
    words = [len(c["text"].split()) for c in chunks]
    print(f"docs: {len(chunks)} chunks in {len(T)} topics, {min(words)}-{max(words)} words (mean {np.mean(words):.0f})")
    print(f"queries: {len(tagged)}; multi-relevant {n_multi}, with grade 2 {n_g2}, with judged non-relevant {n_neg}, "
          f"blind {sum(q['blind'] for q in tagged)}, tune {sum(q['split'] == 'tune' for q in tagged)}; "
          f"synonym tables: base {n_syn[0]}, tuned {n_syn[1]} entries")
    print()
    print(text)


if __name__ == "__main__":
    main()
