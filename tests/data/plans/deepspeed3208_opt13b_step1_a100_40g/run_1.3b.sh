# DeepSpeed-Chat training/step1_supervised_finetuning/training_scripts/single_gpu/run_1.3b.sh, the "default opt-1.3b
# script config" the commenter ran on one A100 40G (April 2023); its text as quoted verbatim in
# https://github.com/deepspeedai/DeepSpeedExamples/issues/551
OUTPUT=$1
ZERO_STAGE=$2
if [ "$OUTPUT" == "" ]; then
    OUTPUT=./output
fi
if [ "$ZERO_STAGE" == "" ]; then
    ZERO_STAGE=0
fi
mkdir -p $OUTPUT

deepspeed --num_gpus 1 main.py --model_name_or_path facebook/opt-1.3b \
   --gradient_accumulation_steps 8 --lora_dim 128 --zero_stage $ZERO_STAGE \
   --deepspeed --output_dir $OUTPUT &> $OUTPUT/training.log
