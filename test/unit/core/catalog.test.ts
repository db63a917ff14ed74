/** GPU catalog and preset lookup: forgiving names, complete entries. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findGpu, isMigSlice, listGpus, smallerGpusNamed, suggestGpus } from '../../../shared/hardware/gpus';
import { findPreset, listPresets, suggestPresets } from '../../../shared/model/presets';

describe('GPU catalog', () => {
  const cases: [string, string][] = [
    ['A100-80GB', 'a100-80gb'], ['a100_80g', 'a100-80gb'], ['A100 40GB', 'a100-40gb'], ['H100', 'h100-sxm'], ['H100-SXM', 'h100-sxm'],
    ['h100-sxm5-80gb', 'h100-sxm'], ['NVIDIA H100 80GB HBM3', 'h100-sxm'], ['H100 PCIe', 'h100-pcie'], ['mi300x', 'mi300x'],
    ['MI250X', 'mi250x'], ['4090', 'rtx-4090'], ['RTX 4090', 'rtx-4090'], ['v100-32gb', 'v100-32gb'], ['b200', 'b200'], ['H200', 'h200'],
    ['L40S', 'l40s'], ['NVIDIA A100-SXM4-40GB', 'a100-40gb'],
    ['B300', 'b300'], ['HGX B300', 'b300'], ['Blackwell Ultra', 'b300'], ['GB300', 'gb300-nvl72'], ['gb300-nvl72', 'gb300-nvl72'], ['GB200', 'gb200-nvl72'],
    // Export and variant parts, by the names torch and nvidia-smi give them.
    ['H20', 'h20'], ['NVIDIA H20', 'h20'], ['NVIDIA H20 96GB HBM3', 'h20'], ['A800', 'a800'], ['NVIDIA A800-SXM4-80GB', 'a800'],
    ['NVIDIA A800 80GB PCIe', 'a800-pcie-80gb'], ['H800 PCIe', 'h800-pcie'], ['NVIDIA H200 NVL', 'h200-nvl'], ['MI325X', 'mi325x'],
    ['AMD Instinct MI325X', 'mi325x'], ['AMD Instinct MI355X', 'mi355x'], ['MI350X', 'mi350x'], ['NVIDIA A100 80GB PCIe', 'a100-pcie-80gb'], ['A100 PCIe 40GB', 'a100-pcie-40gb'],
    ['NVIDIA GH200 480GB', 'gh200'], ['NVIDIA H100 80GB HBM3', 'h100-sxm'],
    // The L40 is not the L40S (before, "L40" was an alias of the L40S, at twice its tensor rate).
    ['L40', 'l40'], ['NVIDIA L40', 'l40'], ['NVIDIA L40S', 'l40s'], ['A40', 'a40'], ['NVIDIA A40', 'a40'],
  ];
  for (const [name, id] of cases) test(`"${name}" finds ${id}`, () => assert.equal(findGpu(name)?.id, id));
  test('a form factor or a memory size the catalog does not have is not read as a nearby entry', () => {
    // Before, "Tesla V100-PCIE-32GB" (torch's name) was the V100 SXM 16 GB, "NVIDIA H200 NVL" the H200 SXM and
    // "NVIDIA H100 94GB" the H100 SXM 80 GB: a prefix of the name matched and the rest was ignored.
    // Two boards at once ("H100 NVL SXM") contradict each other; "B200 Ultra" carries a word the B200 does not.
    // The MI300A (an APU with 128 GB of unified memory) is not the MI300X.
    for (const name of ['Tesla V100-PCIE-32GB', 'A100 24GB', 'MI300A', 'H100 NVL SXM', 'B200 Ultra', 'H100 96GB 700W']) assert.equal(findGpu(name), undefined, name);
    // The entry's own board and a size it has still match: HGX and OAM are the socketed parts; 94 GB is the H100 NVL.
    assert.equal(findGpu('H100 HGX')?.id, 'h100-sxm');
    assert.equal(findGpu('MI300X OAM')?.id, 'mi300x');
    assert.equal(findGpu('NVIDIA H100 94GB')?.id, 'h100-nvl');
    assert.ok(suggestGpus('V100-PCIE-32GB').includes('v100-32gb'));
  });
  // The names torch, nvidia-smi, Slurm gres and Kubernetes node labels give, read token by token. Each of these was
  // misread by a lookup on the compacted key: "V100-SXM3-32GB" read "332g" as a size and "B200 192GB" compared 192
  // with the 180 of the entry's name (the B200's HBM is 192 GB per NVIDIA's DGX B200 datasheet; the name states the
  // usable 180 GB). The expected ids are the catalog entries those parts are (V100 SXM3 32GB is the DGX-2's V100).
  const written: [string, string][] = [
    ['Tesla V100-SXM3-32GB', 'v100-32gb'], ['Tesla V100-SXM2-16GB', 'v100-16gb'], ['Tesla V100-SXM2-32GB', 'v100-32gb'],
    ['NVIDIA B200 192GB', 'b200'], ['b200_192gb', 'b200'], ['NVIDIA H200 SXM5 141GB', 'h200'], ['B300 SXM6 288GB', 'b300'],
    ['gb200_nvl72_186gb', 'gb200-nvl72'], ['A100 PCIe Gen4 80GB', 'a100-pcie-80gb'], ['H100-HBM3-80GB', 'h100-sxm'],
    ['nvidia_h100_80gb_hbm3', 'h100-sxm'], ['NVIDIA-H100-80GB-HBM3', 'h100-sxm'], ['h100sxm580ghbm3', 'h100-sxm'], ['H100 80 GB', 'h100-sxm'],
    ['H100 80GB PCIe', 'h100-pcie'], ['H800 80GB PCIe', 'h800-pcie'], ['H200 NVL 141GB', 'h200-nvl'], ['H100 SXM5 96GB', 'h100-96gb-500w'],
    ['H100 96GB 500W', 'h100-96gb-500w'], ['NVIDIA GeForce RTX 4090', 'rtx-4090'], ['NVIDIA GH200 Grace Hopper 96GB', 'gh200'],
    // PCIe-only cards accept their board; an architecture name restates the chip.
    ['L40S PCIe', 'l40s'], ['NVIDIA A10 PCIe', 'a10g'], ['H100 Hopper', 'h100-sxm'],
    // Descriptors that name no other part: torch's "AC" on the B300, an SR-IOV virtual function (Azure's MI300X), a
    // Kubernetes time-slicing label, "Superchip", the V100's "-LS"; a log's "cuda:" prefix; GDDR memory types.
    ['NVIDIA B300 SXM6 AC', 'b300'], ['AMD Instinct MI300X VF', 'mi300x'], ['NVIDIA-H100-80GB-HBM3-SHARED', 'h100-sxm'],
    ['NVIDIA GH200 Grace Hopper Superchip', 'gh200'], ['GB200 Grace Blackwell Superchip', 'gb200-nvl72'], ['Tesla V100-SXM2-32GB-LS', 'v100-32gb'],
    ['cuda:NVIDIA H100 80GB HBM3', 'h100-sxm'], ['nvidia-h100-mega-80gb', 'h100-sxm'], ['L40S 48GB GDDR6', 'l40s'], ['RTX 4090 24GB GDDR6X', 'rtx-4090'],
    // A GPU count is not a chip ("gpu:h100_80gb:8" typed whole, "H100x8", "8xH100"); a bare number that is a size of
    // one of the chip's parts chooses it ("A100 40").
    ['gpu:h100_80gb:8', 'h100-sxm'], ['H100 x 8', 'h100-sxm'], ['H100x8', 'h100-sxm'], ['8xH100', 'h100-sxm'], ['gpu:a100:8', 'a100-80gb'], ['A100 40', 'a100-40gb'],
    // A bare chip means the entry that answers to the chip alone: "V100" is the V100 SXM2 16GB (the V100S alias of the
    // 32 GB entry is another chip); a memory type names a part only where the others fit too ("H100 96GB HBM3").
    ['V100 SXM', 'v100-16gb'], ['Tesla V100 Volta', 'v100-16gb'], ['NVIDIA H100 96GB HBM3', 'h100-96gb-500w'],
  ];
  for (const [name, id] of written) test(`written as "${name}", finds ${id}`, () => assert.equal(findGpu(name)?.id, id));
  test("a cloud's accelerator-type id is the part it names, though its words say less", () => {
    // Google Cloud's GPU docs: nvidia-tesla-a100 is the A100 40GB, nvidia-a100-80gb the 80GB, nvidia-tesla-v100 the
    // V100 16GB. Read by its words, "nvidia-tesla-a100" is a bare "A100", which is the 80 GB.
    assert.equal(findGpu('nvidia-tesla-a100')?.id, 'a100-40gb');
    assert.equal(findGpu('NVIDIA-TESLA-A100')?.id, 'a100-40gb');
    assert.equal(findGpu('nvidia-a100-80gb')?.id, 'a100-80gb');
    assert.equal(findGpu('nvidia-tesla-v100')?.id, 'v100-16gb');
  });
  test('the smaller parts a name also fits are listed where the name does not say its memory', () => {
    // NVIDIA's A100 datasheet: SXM4 and PCIe parts of 40 GB and 80 GB. A bare "A100" is read as the 80 GB SXM.
    const ids = (n: string) => smallerGpusNamed(n).map((g) => g.id);
    assert.deepEqual(ids('A100'), ['a100-40gb', 'a100-pcie-40gb']);
    assert.deepEqual(ids('gpu:a100:8'), ['a100-40gb', 'a100-pcie-40gb']);
    assert.deepEqual(ids('A100 PCIe'), ['a100-pcie-40gb']);
    // A stated size, the entry's own id or a cloud id leave nothing to choose; so does a bare name whose other parts
    // are larger (the H100 96 GB, the V100 32 GB): a verdict on the smaller part holds on them.
    for (const n of ['A100-SXM4-80GB', 'A100 40', 'a100-80gb', 'nvidia-tesla-a100', 'H100', 'V100', 'H200', 'not a gpu', '']) assert.deepEqual(ids(n), [], n);
  });
  test('a MIG slice is not the whole GPU', () => {
    // torch.cuda.get_device_name on a MIG instance appends "MIG <g>g.<mem>gb": a fraction of the GPU's SMs and memory.
    // A Slurm gres type or a Kubernetes resource names the profile alone ("a100_3g.40gb").
    for (const name of ['NVIDIA A100-SXM4-40GB MIG 3g.20gb', 'NVIDIA H100 80GB HBM3 MIG 1g.10gb', 'a100_3g.40gb', 'nvidia.com/mig-1g.10gb']) {
      assert.equal(findGpu(name), undefined, name);
      assert.ok(isMigSlice(name), name);
    }
    assert.equal(isMigSlice('NVIDIA A100-SXM4-40GB'), false);
  });
  test('suggestions rank the named chip first, on the board the name gives', () => {
    assert.deepEqual(suggestGpus('A100 24GB').slice(0, 2).sort(), ['a100-40gb', 'a100-80gb']);
    assert.equal(findGpu('H100 PCIe 96GB'), undefined);
    assert.equal(suggestGpus('H100 PCIe 96GB')[0], 'h100-pcie');
    assert.ok(!suggestGpus('A100 24GB').includes('a10g'));
  });
  test('unknown names give undefined and suggestions', () => {
    assert.equal(findGpu('tpu-v5'), undefined);
    assert.equal(findGpu(''), undefined);
    assert.equal(findGpu(42), undefined);
    assert.ok(suggestGpus('h10').includes('h100-sxm'));
  });
  test('every entry is complete and cites a source', () => {
    // Issue 2 §2 lists these GPUs as the minimum catalog.
    for (const id of ['v100-16gb', 'a100-40gb', 'a100-80gb', 'h100-sxm', 'h100-pcie', 'h200', 'b200', 'mi250x', 'mi300x', 'l40s', 'rtx-4090']) {
      assert.ok(listGpus().some((g) => g.id === id), id);
    }
    for (const g of listGpus()) {
      for (const k of ['memoryBytes', 'hbmBandwidth', 'intraNodeBandwidth', 'interNodeBandwidth', 'hostBandwidth', 'intraNodeLatency', 'interNodeLatency'] as const) {
        assert.ok(g[k] > 0, `${g.id}.${k}`);
      }
      assert.ok((g.peakFlops.bf16 ?? g.peakFlops.fp16 ?? 0) > 0, g.id);
      assert.ok(g.achievableFlopsFraction > 0 && g.achievableFlopsFraction < 1);
      assert.ok(g.source.length > 10);
      // The board is one of the catalog's forms, and a name that says PCIe or NVL is on an entry of that form.
      assert.ok(['sxm', 'oam', 'pcie', 'nvl', 'superchip'].includes(g.form), `${g.id}.form`);
      for (const n of [g.id, g.name, ...g.aliases]) {
        if (/pcie/i.test(n)) assert.equal(g.form, 'pcie', n);
        if (/nvl(?!\d)/i.test(n)) assert.equal(g.form, 'nvl', n);
        // Every name an entry answers to finds it.
        assert.equal(findGpu(n)?.id, g.id, n);
      }
    }
  });
  test('Blackwell Ultra: the B300 has the B200\'s BF16 and FP8 peaks, the GB300 the GB200\'s, each with 288 GB of HBM3e and an 800 Gb/s adapter per GPU', () => {
    // NVIDIA HGX B300: 36 PFLOPS BF16 and 72 PFLOPS FP8 with sparsity over 8 GPUs → 2.25 and 4.5 PFLOPS dense per GPU;
    // GB300 NVL72: 360 and 720 PFLOPS with sparsity over 72 GPUs → 2.5 and 5 PFLOPS dense. 288 GB (listed usable: 270 GB
    // on the B300, 279 GB on the GB300) against the B200's 180 GB; ConnectX-8 at 800 Gb/s = 100 GB/s per direction.
    const [b200, b300, gb200, gb300] = ['b200', 'b300', 'gb200-nvl72', 'gb300-nvl72'].map((id) => findGpu(id)!);
    assert.equal(b300.peakFlops.bf16, 36e15 / 8 / 2);
    assert.equal(b300.peakFlops.fp8, 72e15 / 8 / 2);
    assert.equal(gb300.peakFlops.bf16, 360e15 / 72 / 2);
    assert.equal(gb300.peakFlops.fp8, 720e15 / 72 / 2);
    assert.equal(b300.peakFlops.bf16, b200.peakFlops.bf16);
    assert.equal(gb300.peakFlops.fp8, gb200.peakFlops.fp8);
    // 270 and 279 "GB" on the footing of the B200's 180 GB = 183,359 MiB.
    assert.ok(Math.abs(b300.memoryBytes / b200.memoryBytes - 270 / 180) < 1e-4);
    assert.ok(Math.abs(gb300.memoryBytes / b200.memoryBytes - 279 / 180) < 1e-4);
    for (const g of [b300, gb300]) {
      assert.equal(g.interNodeBandwidth, 800e9 / 8);
      assert.equal(g.intraNodeBandwidth, 1.8e12 / 2);
      assert.equal(g.arch, 'blackwell');
    }
    assert.equal(gb300.gpusPerNode, 4);
  });
  test('export and variant parts carry their own datasheet figures, not the part they are cut from', () => {
    const g = (id: string) => findGpu(id)!;
    // NVIDIA H20 product brief: 148 TFLOPS BF16 and 296 FP8 dense, 4.0 TB/s, NVLink 900 GB/s; nvidia-smi 97,871 MiB, 78 SMs.
    assert.equal(g('h20').peakFlops.bf16, 148e12);
    assert.equal(g('h20').peakFlops.fp8, 296e12);
    assert.equal(g('h20').hbmBandwidth, 4.0e12);
    assert.equal(g('h20').intraNodeBandwidth, 900e9 / 2);
    assert.equal(g('h20').memoryBytes, 97_871 * 2 ** 20);
    assert.equal(g('h20').sms, 78);
    // A800: the A100's compute and HBM, NVLink 400 GB/s bidirectional instead of 600.
    assert.equal(g('a800').peakFlops.bf16, g('a100-80gb').peakFlops.bf16);
    assert.equal(g('a800').intraNodeBandwidth, 400e9 / 2);
    assert.equal(g('a800').memoryBytes, g('a100-80gb').memoryBytes);
    // H200 NVL: 1,671 TFLOPS BF16 listed with sparsity, half of it dense; the H200 SXM's 141 GB.
    assert.equal(g('h200-nvl').peakFlops.bf16, 1671e12 / 2);
    assert.ok(g('h200-nvl').peakFlops.bf16! < g('h200').peakFlops.bf16!);
    assert.equal(g('h200-nvl').memoryBytes, g('h200').memoryBytes);
    // H800 PCIe: the H100 PCIe's compute (756 TFLOPS BF16 dense), not the H800 SXM's 989.
    assert.equal(g('h800-pcie').peakFlops.bf16, g('h100-pcie').peakFlops.bf16);
    // A100 PCIe 40GB: 1,555 GB/s and the 40 GB part's capacity.
    assert.equal(g('a100-pcie-40gb').hbmBandwidth, 1555e9);
    assert.equal(g('a100-pcie-40gb').memoryBytes, g('a100-40gb').memoryBytes);
    // MI355X and MI350X: one CDNA 4 die, 256 CUs, at 2.4 and 2.2 GHz (AMD CDNA 4 whitepaper), so the peaks scale with the
    // clock; FP8 is twice BF16 (8,192 and 4,096 dense FLOP per CU per clock); 288 GB (the MI325X's 256 GB × 9/8).
    assert.ok(Math.abs(g('mi355x').peakFlops.bf16! / g('mi350x').peakFlops.bf16! - 2.4 / 2.2) < 1e-9);
    assert.equal(g('mi355x').peakFlops.fp8, 2 * g('mi355x').peakFlops.bf16!);
    assert.ok(Math.abs(g('mi355x').peakFlops.bf16! - 256 * 4096 * 2.4e9) < 1e9);
    assert.ok(Math.abs(g('mi355x').memoryBytes / g('mi325x').memoryBytes - 288 / 256) < 0.002);
    assert.equal(g('mi355x').hbmBandwidth, 8e12);
    // MI325X: the MI300X's CDNA 3 compute with 256 GB at 6 TB/s (the MI300X's 192 GB at 5.3).
    assert.equal(g('mi325x').peakFlops.bf16, g('mi300x').peakFlops.bf16);
    assert.equal(g('mi325x').hbmBandwidth, 6e12);
    assert.ok(Math.abs(g('mi325x').memoryBytes / g('mi300x').memoryBytes - 256 / 192) < 0.002);
    // L40 datasheet: 181.05 TFLOPS BF16 dense (362.1 with sparsity), the L40S 362.05; A40 datasheet: 149.7 dense.
    assert.equal(g('l40').peakFlops.bf16, 181.05e12);
    assert.ok(Math.abs(g('l40s').peakFlops.bf16! / g('l40').peakFlops.bf16! - 2) < 0.001);
    assert.equal(g('a40').peakFlops.bf16, 149.7e12);
    assert.equal(g('a40').hbmBandwidth, 696e9);
  });
  test('memory sizes are the reported device sizes (A100 80GB = 80 GiB, H100 = 81,559 MiB)', () => {
    assert.equal(findGpu('a100-80gb')?.memoryBytes, 80 * 2 ** 30);
    assert.equal(findGpu('h100')?.memoryBytes, 81_559 * 2 ** 20);
  });
});

describe('model presets', () => {
  const cases: [string, string][] = [
    ['llama3-8b', 'llama-3-8b'], ['meta-llama/Meta-Llama-3-8B', 'llama-3-8b'], ['Llama-3.1-8B', 'llama-3.1-8b'],
    ['meta-llama/Llama-3.1-8B-Instruct', 'llama-3.1-8b'], ['Qwen/Qwen2.5-7B', 'qwen2.5-7b'], ['mistralai/Mixtral-8x7B-v0.1', 'mixtral-8x7b'],
    ['gpt2', 'gpt2'], ['Llama-2-7b-hf', 'llama-2-7b'], ['qwen3-30b-a3b', 'qwen3-30b-a3b'], ['torchtitan-llama3-debugmodel', 'torchtitan-llama3-debugmodel'],
  ];
  for (const [name, id] of cases) test(`"${name}" finds ${id}`, () => assert.equal(findPreset(name)?.id, id));
  test('every preset loads and names a source', () => {
    assert.ok(listPresets().length >= 40);
    for (const p of listPresets()) {
      assert.ok(p.source.length > 10, p.id);
      assert.ok(p.model.layers > 0 && p.model.hiddenSize > 0);
    }
    assert.equal(findPreset('no-such-model'), undefined);
    assert.equal(findPreset(undefined), undefined);
  });
});

describe('model presets: names that are not bundled', () => {
  test('a release decoration at the end of a name still finds the base model', () => {
    // An FP8 or AWQ checkpoint of Llama 3.1 8B has Llama 3.1 8B's shape (its config.json is the base model's).
    assert.equal(findPreset('meta-llama/Llama-3.1-8B-Instruct-FP8')?.id, 'llama-3.1-8b');
    assert.equal(findPreset('Qwen/Qwen2.5-7B-Instruct-AWQ')?.id, 'qwen2.5-7b');
    // Decorations are whole words of the name: "4bit" goes, the "4b" size stays (before, the compacted
    // "gemma34bitbnb4bit" lost its "4b…it" and found nothing). Unsloth's 4-bit Gemma 3 4B is Gemma 3 4B's shape.
    assert.equal(findPreset('unsloth/gemma-3-4b-it-bnb-4bit')?.id, 'gemma-3-4b');
    // A decoration before the version: Mixtral 8x7B Instruct v0.1 is tuned from Mixtral 8x7B v0.1 (same config.json).
    assert.equal(findPreset('mistralai/Mixtral-8x7B-Instruct-v0.1')?.id, 'mixtral-8x7b');
    // A version is not a decoration: Mistral 7B v0.3's config.json has vocab_size 32768, the bundled v0.1 32000.
    assert.equal(findPreset('mistralai/Mistral-7B-v0.3'), undefined);
  });
  test('suggestions rank the same parameter count first and never invent a match', () => {
    assert.equal(findPreset('Qwen/Qwen2.5-Coder-7B'), undefined);
    assert.equal(suggestPresets('Qwen/Qwen2.5-Coder-7B')[0], 'qwen2.5-7b');
    assert.equal(findPreset('Qwen/Qwen3-30B-A3B-Thinking-2507'), undefined);
    assert.equal(suggestPresets('Qwen/Qwen3-30B-A3B-Thinking-2507')[0], 'qwen3-30b-a3b');
    // The count is read before punctuation is dropped: "Llama-3.1-8B…" carries 8B (not "3.18B"), so the 8B ranks above
    // the 70B whose alias "Llama-3.3-70B-Instruct" is fewer edits away.
    assert.equal(suggestPresets('meta-llama/Llama-3.1-8B-Instruct-QAT')[0], 'llama-3.1-8b');
    assert.deepEqual(suggestPresets('my-custom-model'), []);
  });
});
