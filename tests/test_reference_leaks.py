"""A reference inside the model's input (PL214): planlint.services.reference_leaks."""

from __future__ import annotations

import pytest

from planlint.services.reference_leaks import checked, leaked_rows, model_input, occurs_in, reference_text

ANSWER = "The refund window closes 30 days after delivery."


@pytest.mark.parametrize("prompt", [
    f"Customer asks about returns. {ANSWER} Please answer politely.",
    "Customer asks about returns. (answer: the REFUND window closes 30 days, after delivery!) Reply.",
    "the refund window\nCLOSES 30 days after delivery",
    "Kunde fragt: The refund window closes 30 days after delivery.\u2009\u00bb",
])
def test_a_reference_pasted_into_the_prompt_is_found(prompt):
    assert leaked_rows([prompt], [ANSWER]) == [0]


@pytest.mark.parametrize("prompt", [
    "Customer asks how long the refund window is after delivery.",  # the words, not together
    "The refund window closes 30 days before delivery.",
    "Therefund window closes 30 days after delivery",  # letters pass the quick test, words do not
    "",
])
def test_a_reference_not_in_the_prompt_is_not_found(prompt):
    assert leaked_rows([prompt], [ANSWER]) == []


@pytest.mark.parametrize("reference", ["42", "1,234,567", "3.14159 2.71828 1.41421", "Paris", "New York", "yes", "x = 5", ""])
def test_short_and_numeric_references_are_not_checked(reference):
    assert not checked(reference)
    assert leaked_rows([f"What is it? {reference} {reference}"], [reference]) == []


def test_long_enough_references_are_checked():
    assert checked("Albert Einstein physicist")
    assert checked(ANSWER)
    assert checked("order 48213 was refunded")  # numbers among words count


def test_chat_rows_compare_the_last_assistant_turn_with_the_system_and_user_turns():
    messages = [
        {"role": "system", "content": "You help with refunds. Policy: the refund window closes 30 days after delivery."},
        {"role": "user", "content": [{"type": "text", "text": "How long do I have?"}]},
        {"role": "assistant", "content": ANSWER},
    ]
    assert reference_text(messages) == ANSWER
    assert "How long do I have?" in model_input(messages) and ANSWER not in model_input(messages)
    assert leaked_rows([model_input(messages)], [reference_text(messages)]) == [0]
    clean = [messages[1], messages[2]]
    assert leaked_rows([model_input(clean)], [reference_text(clean)]) == []


def test_an_earlier_assistant_turn_is_neither_input_nor_reference():
    messages = [
        {"role": "user", "content": "Is the refund window long?"},
        {"role": "assistant", "content": ANSWER},
        {"role": "user", "content": "And for exchanges?"},
        {"role": "assistant", "content": "Exchanges are possible for sixty days after delivery."},
    ]
    assert reference_text(messages).startswith("Exchanges")
    assert leaked_rows([model_input(messages)], [reference_text(messages)]) == []


def test_values_that_are_not_text():
    assert reference_text(None) == "" and reference_text(True) == ""
    assert reference_text({"answer": "a b c"}) == '{"answer": "a b c"}'
    assert model_input(None) == "" and model_input(123) == "123"
    assert occurs_in("alpha beta gamma delta", "x alpha beta gamma delta y")


def test_a_batch_keeps_positions():
    prompts = ["nothing here at all", f"see: {ANSWER}", "another row without it", f"{ANSWER.upper()}"]
    assert leaked_rows(prompts, [ANSWER, ANSWER, "", ANSWER]) == [1, 3]
