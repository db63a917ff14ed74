/**
 * Every config format ShardLens reads, in one table: how its text is parsed, its reader, its key table (formats/<name>/
 * keys.json) and, where "Apply layout" can write it, its rewriter. Adding a FormatId without an entry here is a type
 * error; parseConfig (index.ts), keyTables.ts and layout.ts read this table.
 */
import type { FormatId } from '../shared/plan/facts';
import { lookupTable } from '../shared/lookup';
import type { LineIndex } from './common/text';
import type { FactSink } from './common/sink';
import type { KNode } from './common/tree';
import type { Rewriter } from './common/edit/types';
import { dialect, table, type KeyDoc, type KeyTable } from './common/keyDocs';
import { readAccelerate } from './accelerate/reader';
import { rewriteAccelerate } from './accelerate/rewriter';
import accelerateKeys from './accelerate/keys.json';
import { readAxolotl } from './axolotl/reader';
import { rewriteAxolotl } from './axolotl/rewriter';
import axolotlKeys from './axolotl/keys.json';
import { readDeepSpeed } from './deepspeed/reader';
import { rewriteDeepSpeed } from './deepspeed/rewriter';
import deepspeedKeys from './deepspeed/keys.json';
import dsChatKeys from './deepspeed-chat/keys.json';
import { readGptNeox } from './gpt-neox/reader';
import gptNeoxKeys from './gpt-neox/keys.json';
import { readHfConfig } from './hf-config/reader';
import hfTrainerKeys from './hf-trainer/keys.json';
import hfConfigKeys from './hf-config/keys.json';
import { readHfTrainerYaml } from './hf-trainer/yaml';
import rayActorKeys from './launch/ray-actor.json';
import { readLightning, readLitgpt, readTorchtune } from './lightning/reader';
import { readLlamaFactory } from './llamafactory/reader';
import { rewriteLlamaFactory } from './llamafactory/rewriter';
import llamafactoryKeys from './llamafactory/keys.json';
import megatronKeys from './megatron/keys.json';
import { megatronYamlKeys } from './megatron/yamlKeys';
import { rewriteMegatronScript } from './megatron/rewriter';
import { readMegatronScript, type SourceReader } from './megatron/script';
import { readMegatronYaml } from './megatron/yaml';
import { readNanotron } from './nanotron/reader';
import nanotronKeys from './nanotron/keys.json';
import { readNemo } from './nemo/reader';
import nemoKeys from './nemo/keys.json';
import openrlhfKeys from './openrlhf/keys.json';
import { readTorchtitan } from './torchtitan/reader';
import { rewriteTorchtitan } from './torchtitan/rewriter';
import torchtitanKeys from './torchtitan/keys.json';
import torchtuneKeys from './torchtune/keys.json';
import litgptKeys from './litgpt/keys.json';
import lightningKeys from './lightning/keys.json';
import verlKeys from './verl/keys.json';
import { readVerlYaml } from './verl/yaml';
import { readNemoRl } from './nemo-rl/reader';
import nemoRlKeys from './nemo-rl/keys.json';
import { readRoll, rollKeyDocs } from './roll/reader';
import { readEasyR1 } from './easyr1/reader';
import easyr1Keys from './easyr1/keys.json';
import { readLlmFoundry } from './llm-foundry/reader';
import llmFoundryKeys from './llm-foundry/keys.json';
import { readLingua } from './lingua/reader';
import linguaKeys from './lingua/keys.json';
import { readPicotron } from './picotron/reader';
import picotronKeys from './picotron/keys.json';

/** What a reader gets: the parsed tree (JSON, YAML, TOML) or the text (shell scripts). */
export interface ReaderInput {
  readonly root: KNode | undefined;
  readonly text: string;
  readonly li: LineIndex;
  readonly readSource?: SourceReader;
}

/** One config format. */
export interface FormatModule {
  readonly syntax: 'json' | 'yaml' | 'toml' | 'shell';
  readonly read: (s: FactSink, input: ReaderInput) => void;
  readonly keys?: KeyTable;
  readonly rewrite?: Rewriter;
}

/** Megatron flags and the launch dialects a shell script may speak, for hovers and completion in scripts. */
const LAUNCH: KeyTable = {
  keys: lookupTable([dialect(hfTrainerKeys), dialect(dsChatKeys), dialect(openrlhfKeys), dialect(rayActorKeys), dialect(verlKeys)].reduce<Record<string, KeyDoc>>(
    (all, t) => { for (const [k, d] of Object.entries(t.keys)) all[k] ??= d; return all; }, { ...table(megatronKeys).keys })),
};

/** A tree reader as a format reader. */
const tree = (read: (s: FactSink, root: KNode | undefined) => void) => (s: FactSink, i: ReaderInput) => read(s, i.root);

export const FORMATS: Readonly<Record<FormatId, FormatModule>> = {
  deepspeed: { syntax: 'json', read: tree(readDeepSpeed), keys: table(deepspeedKeys), rewrite: rewriteDeepSpeed },
  'hf-config': { syntax: 'json', read: tree(readHfConfig), keys: table(hfConfigKeys) },
  torchtitan: { syntax: 'toml', read: tree(readTorchtitan), keys: table(torchtitanKeys), rewrite: rewriteTorchtitan },
  'megatron-script': { syntax: 'shell', read: (s, i) => readMegatronScript(s, i.text, i.li, i.readSource), keys: LAUNCH, rewrite: rewriteMegatronScript },
  'megatron-yaml': { syntax: 'yaml', read: tree(readMegatronYaml), keys: megatronYamlKeys(table(megatronKeys)) },
  accelerate: { syntax: 'yaml', read: tree(readAccelerate), keys: table(accelerateKeys), rewrite: rewriteAccelerate },
  axolotl: { syntax: 'yaml', read: tree(readAxolotl), keys: table(axolotlKeys), rewrite: rewriteAxolotl },
  llamafactory: { syntax: 'yaml', read: tree(readLlamaFactory), keys: table(llamafactoryKeys), rewrite: rewriteLlamaFactory },
  nanotron: { syntax: 'yaml', read: tree(readNanotron), keys: table(nanotronKeys) },
  lightning: { syntax: 'yaml', read: tree(readLightning), keys: table(lightningKeys) },
  litgpt: { syntax: 'yaml', read: tree(readLitgpt), keys: table(litgptKeys) },
  torchtune: { syntax: 'yaml', read: tree(readTorchtune), keys: table(torchtuneKeys) },
  nemo: { syntax: 'yaml', read: tree(readNemo), keys: dialect(nemoKeys) },
  'gpt-neox': { syntax: 'yaml', read: tree(readGptNeox), keys: dialect(gptNeoxKeys) },
  'hf-trainer': { syntax: 'yaml', read: tree(readHfTrainerYaml), keys: dialect(hfTrainerKeys, true) },
  'nemo-rl': { syntax: 'yaml', read: tree(readNemoRl), keys: dialect(nemoRlKeys) },
  roll: { syntax: 'yaml', read: tree(readRoll), keys: dialect(rollKeyDocs()) },
  easyr1: { syntax: 'yaml', read: tree(readEasyR1), keys: dialect(easyr1Keys) },
  'llm-foundry': { syntax: 'yaml', read: tree(readLlmFoundry), keys: dialect(llmFoundryKeys) },
  lingua: { syntax: 'yaml', read: tree(readLingua), keys: dialect(linguaKeys) },
  picotron: { syntax: 'json', read: tree(readPicotron), keys: dialect(picotronKeys) },
  verl: { syntax: 'yaml', read: tree(readVerlYaml), keys: dialect(verlKeys) },
};
