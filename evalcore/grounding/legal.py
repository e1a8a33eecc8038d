"""General legal knowledge: sentences that rest on a statute, rule, code, regulation or case.

Why: general legal knowledge is out of scope of the hallucination audit (docs/METHODOLOGY.md). Anything
in a sentence that cites a statute, regulation, code, rule, restatement or case ("29 U.S.C.
§ 2101", "Section 2-207 of the UCC", "Smith v. Jones, 550 U.S. 544 (2007)") is not checked -
references, numbers and quotes alike. A rule of law is not a fact about the matter.
"""

from __future__ import annotations

import re

_AUTHORITY_RE = re.compile(
    r"\bU\.\s?S\.\s?C\.?|\bUSC\b|\bC\.\s?F\.\s?R\.?|\bCFR\b|\bU\.\s?C\.\s?C\.?|\bUCC\b|\bGDPR\b|\bERISA\b|\bFLSA\b"
    r"|\b(?:CERCLA|HIPAA|CCPA|CPRA|WARN|IRC|FRCP|FMLA|ADEA|ADA|OWBPA|COBRA|NLRA|FLSA|OSHA|HSR|FCPA|SOX|TILA|RESPA|"
    r"FCRA|FDCPA|TCPA|DTSA|CFAA|DMCA|PREP|UTSA|UFTA|UVTA|MBCA|DGCL|RULPA|RUPA|ULLCA)\b"
    r"|\bTitle\s+[IVX]+\b|\bStat\.|\bFed\.\s?R\.|\bRestatement\b|\bSarbanes-Oxley\b|\bDodd-Frank\b|\bHart-Scott-Rodino\b"
    r"|\bstatutes?\s+of\s+(?:limitations?|frauds|repose)\b|\bcase\s+law\b|\bcourts?\s+(?:generally\s+|have\s+|has\s+|will\s+|typically\s+)?"
    r"(?:held|hold|holds|apply|applied|applies|construe|interpret|require|recognize|enforce)\b"
    r"|\bcourts?\s+(?:must|may|would|will|can|could|should|generally|typically|often|usually)\b|\bdoctrine\b|\bcommon\s+law\b"
    r"|\b(?:federal|state|Delaware|California|New\s+York|Texas|English)\s+law\b|\bunder\s+the\s+law\s+of\b|\bbusiness\s+judgment\s+rule\b"
    r"|\bas\s+a\s+matter\s+of\s+law\b|\bthe\s+law\s+(?:requires|provides|presumes)\b"
    r"|\b[A-Z][A-Za-z.'&-]+(?:\s+[A-Z][A-Za-z.'&-]+)*\s+v\.\s+[A-Z]"  # case names: Smith v. Jones
    r"|\b(?:[A-Z][A-Za-z.'&-]*\s+(?:of\s+(?:the\s+)?)?){1,6}(?:Act(?!\s+of\s+God)|Code)\b"
    r"|\b(?:Treasury|Federal|SEC|Securities|Exchange|Agency|EU|European)\s+(?:Regulations?|Rules?)\b"
    r"|\bRules\s+of\s+(?:Civil|Criminal|Evidence|Professional|Appellate|Court)\b|\bRegulation\s+[A-Z](?:-[A-Z])?\b"
    r"|\b(?:[A-Z][a-z]+\s+){0,6}(?:Directive|Convention|Treaty|Constitution|Statute|Restatement)\b"
    r"|\b\d+\s+(?:U\.S\.|S\.\s?Ct\.|F\.\s?(?:2d|3d|4th|Supp\.)|A\.[23]d|N\.E\.[23]d|P\.[23]d|So\.\s?[23]d|Cal\.\s?(?:App\.\s?)?\d*(?:th|d)?|WL|B\.R\.)\s+\d+"
    r"|\bCode\s+§|\bRule\s+\d+[a-z]?(?:-\d+)?\b|\b(?:Cal|Del|N\.Y|Tex|Fla|Mass)\.\s+[A-Z][a-z]+\.?\s+(?:Code|Law)\b",
)


def authority_context(sentence: str) -> bool:
    """True when the sentence rests on a statute, rule, code, regulation or case."""
    for m in _AUTHORITY_RE.finditer(sentence):
        word = m.group().strip()
        # "the Agreement"/"Purchase Agreement" are not authorities; Act/Code/Rules etc. are.
        if re.fullmatch(r"(?:The|This)?\s*(?:Code|Rules?|Regulations?)", word):
            continue
        return True
    return False
