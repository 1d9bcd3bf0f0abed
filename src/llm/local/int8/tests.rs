use super::*;

fn values(n: usize, seed: f32) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.7373 + seed).sin() * 3.0 + if i % 97 == 5 { 20.0 } else { 0.0 }).collect()
}

/// 64 inputs (two blocks), 48 outputs (three groups, so the AVX2 halves of a group differ).
fn layer() -> (Int8Linear, Vec<f32>, Vec<f32>) {
    let (inputs, outputs) = (64, 48);
    let (w, bias) = (values(inputs * outputs, 0.3), values(outputs, 1.1));
    (Int8Linear::new(&w, bias.clone(), inputs).unwrap(), w, bias)
}

#[test]
fn every_kernel_gives_the_plain_loops_bits() {
    let (layer, _, _) = layer();
    // Fewer rows than a register block, exactly one, one over, and many blocks of rows.
    for rows in [1, 7, 8, 9, 17, 70] {
        let mut q = Quantized::default();
        q.fill(&values(rows * layer.inputs, 2.9), layer.inputs);
        let mut plain = vec![0.0; rows * layer.outputs];
        layer.apply_plain(&q, &mut plain);
        let mut chosen = Vec::new();
        layer.apply_quantized(&q, &mut chosen);
        assert_eq!(chosen, plain, "{rows} rows: the dispatched kernel");
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vnni") {
                let mut vnni = vec![0.0; rows * layer.outputs];
                // SAFETY: the features are present.
                unsafe { layer.apply_vnni(&q, &mut vnni) };
                assert_eq!(vnni, plain, "{rows} rows: VNNI");
            } else {
                eprintln!("no AVX-512 VNNI here: that kernel is not compared");
            }
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                let mut avx2 = vec![0.0; rows * layer.outputs];
                // SAFETY: the features are present.
                unsafe { layer.apply_avx2(&q, &mut avx2) };
                assert_eq!(avx2, plain, "{rows} rows: AVX2");
            } else {
                eprintln!("no AVX2 here: that kernel is not compared");
            }
        }
    }
}

#[test]
fn the_product_tracks_f32() {
    let (layer, w, bias) = layer();
    let (inputs, outputs, rows) = (layer.inputs, layer.outputs, 11);
    let x = values(rows * inputs, 2.9);
    let mut out = Vec::new();
    layer.apply(&x, &mut Quantized::default(), &mut out);
    for r in 0..rows {
        for n in 0..outputs {
            let exact: f32 = bias[n] + (0..inputs).map(|k| x[r * inputs + k] * w[n * inputs + k]).sum::<f32>();
            // Rounding error grows with the operands' sizes, not the (possibly cancelled) result.
            let norm = |v: &[f32]| v.iter().map(|a| a * a).sum::<f32>().sqrt();
            let bound = 0.01 * norm(&x[r * inputs..][..inputs]) * norm(&w[n * inputs..][..inputs]);
            let got = out[r * outputs + n];
            assert!((got - exact).abs() < bound, "row {r} out {n}: {got} vs {exact}");
        }
    }
}

#[test]
fn a_large_value_costs_only_its_own_block_precision() {
    // One huge activation in the first block; the second block's small values must still
    // come through at their own (fine) step, which one scale per row would round away.
    let inputs = 64;
    let mut x = vec![0.01f32; inputs];
    x[0] = 100.0;
    let w: Vec<f32> = (0..16 * inputs).map(|i| if i % inputs >= 32 { 1.0 } else { 0.0 }).collect();
    let layer = Int8Linear::new(&w, vec![0.0; 16], inputs).unwrap();
    let mut out = Vec::new();
    layer.apply(&x, &mut Quantized::default(), &mut out);
    for v in out {
        assert!((v - 0.32).abs() < 1e-3, "{v}");
    }
}

#[test]
fn shapes_that_do_not_fill_whole_groups_are_refused() {
    assert!(Int8Linear::new(&[0.0; 32 * 15], vec![0.0; 15], 32).is_err());
    assert!(Int8Linear::new(&[0.0; 16 * 16], vec![0.0; 16], 16).is_err());
    assert!(Int8Linear::new(&[0.0; 16 * 31], vec![0.0; 16], 32).is_err());
}
