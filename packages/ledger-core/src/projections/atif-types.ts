import type { JsonObject, JsonValue } from "../events/json.js";

// ATIF v1.7 (harbor-framework/harbor rfcs/0001-trajectory-format.md), the fields we can fill.

export interface AtifToolCall {
  tool_call_id: string;
  function_name: string;
  /** Always a JSON object (ATIF): a plain-value input is `{ input }`. */
  arguments: JsonObject;
  extra?: JsonObject;
}

export interface AtifSubagentRef {
  trajectory_id: string;
  session_id?: string;
  extra?: JsonObject;
}

export interface AtifObservationResult {
  source_call_id?: string;
  /**
   * Text, or content parts when what the tool gave the model holds images or other files or
   * names files by a provider's file id (ATIF v1.6+; see `atifMessageOf`).
   */
  content: string | AtifContentPart[] | null;
  subagent_trajectory_ref?: AtifSubagentRef[];
  extra?: JsonObject;
}

export interface AtifMetrics {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
}

/** The media types an ATIF image part takes. */
export type AtifImageMediaType = "image/jpeg" | "image/png" | "image/gif" | "image/webp";

/** A part of a multimodal step message (ATIF v1.6+): text, or an image at a path or URL. */
export type AtifContentPart =
  | { type: "text"; text: string }
  | { type: "image"; source: { media_type: AtifImageMediaType; path: string } };

export interface AtifStep {
  step_id: number;
  timestamp: string;
  source: "system" | "user" | "agent";
  /** Text, or content parts when a user's message holds images or files (see `atifMessageOf`). */
  message: string | AtifContentPart[];
  reasoning_content?: string;
  model_name?: string;
  tool_calls?: AtifToolCall[];
  observation?: { results: AtifObservationResult[] };
  metrics?: AtifMetrics;
  llm_call_count?: number;
  /** The step is a fork's copy of a call another run made (its tokens counted there). */
  is_copied_context?: boolean;
  extra?: JsonObject;
}

export interface AtifTrajectory {
  schema_version: "ATIF-v1.7";
  session_id: string;
  trajectory_id: string;
  agent: {
    name: string;
    version: string;
    model_name?: string;
    tool_definitions?: JsonValue[];
    extra?: JsonObject;
  };
  steps: AtifStep[];
  notes?: string;
  final_metrics: {
    total_prompt_tokens: number;
    total_completion_tokens: number;
    total_cached_tokens: number;
    total_steps: number;
  };
  subagent_trajectories?: AtifTrajectory[];
  extra?: JsonObject;
}
